"""DefaultHttpRequestHandler over real HTTP on loopback: what it sends, what it returns, what it refuses."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from agentnb.declarative import (
    DeclarativeActionError,
    DefaultHttpRequestHandler,
    HttpRequestInfo,
    WorkflowFactory,
)
from agentnb.exceptions import ServiceConnectionError, ServiceTimeoutError
from tests.declarative.local_http_server import LocalHTTPServer
from tests.mcp.mcp_helpers import free_port


@pytest.fixture(scope="module")
def server() -> Iterator[LocalHTTPServer]:
    local = LocalHTTPServer()
    yield local
    local.stop()


async def test_sends_method_headers_body_and_returns_status_headers_and_parsed_json(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler() as http:
        result = await http(
            HttpRequestInfo("post", f"{server.base_url}/echo", headers={"X-Trace": "t1"}, body={"n": 1})
        )
    assert result.status_code == 200
    assert result.is_success_status_code
    assert result.body["method"] == "POST"
    assert result.body["headers"]["x-trace"] == "t1"
    assert result.body["headers"]["content-type"] == "application/json"  # data goes as JSON
    assert result.body["body"] == '{"n": 1}'
    assert result.headers["x-multi"] == "one, two"  # names lower-cased, repeats joined
    assert result.text is not None and result.text.startswith("{")


async def test_text_body_stays_text_and_a_str_body_goes_as_text_plain(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler() as http:
        plain = await http(HttpRequestInfo("GET", f"{server.base_url}/text"))
        echoed = await http(HttpRequestInfo("PUT", f"{server.base_url}/echo", body="hello"))
    assert plain.body == "plain words, no JSON"
    assert echoed.body["headers"]["content-type"] == "text/plain"
    assert echoed.body["body"] == "hello"


async def test_non_2xx_is_a_result_not_an_exception(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler() as http:
        teapot = await http(HttpRequestInfo("GET", f"{server.base_url}/echo?status=418"))
        missing = await http(HttpRequestInfo("GET", f"{server.base_url}/nowhere"))
    assert (teapot.status_code, teapot.is_success_status_code) == (418, False)
    assert (missing.status_code, missing.body) == (404, "not found")


async def test_query_parameters_are_appended_and_the_authored_query_kept_byte_for_byte(
    server: LocalHTTPServer,
) -> None:
    authored = f"{server.base_url}/echo?a=1&flag&b=%2F&a=2&list[]=x"
    async with DefaultHttpRequestHandler() as http:
        result = await http(HttpRequestInfo("GET", authored, query_parameters={"q": "café & co", "a": "3"}))
    assert result.body["path"] == "/echo?a=1&flag&b=%2F&a=2&list[]=x&q=caf%C3%A9%20%26%20co&a=3"


async def test_a_clients_default_params_fill_in_keys_the_request_does_not_set(server: LocalHTTPServer) -> None:
    async with httpx.AsyncClient(params={"api-version": "2", "a": "client"}) as client:
        result = await DefaultHttpRequestHandler(client=client)(HttpRequestInfo("GET", f"{server.base_url}/echo?a=1"))
    assert result.body["path"] == "/echo?a=1&api-version=2"


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/x", "/relative/path", "127.0.0.1:80/echo", "file:///etc/passwd", "http:///nohost"]
)
async def test_only_absolute_http_urls_are_sent(url: str) -> None:
    async with DefaultHttpRequestHandler() as http:
        with pytest.raises(ValueError, match="absolute http"):
            await http(HttpRequestInfo("GET", url))


async def test_gzip_and_deflate_are_decoded(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler() as http:
        gzipped = await http(HttpRequestInfo("GET", f"{server.base_url}/gzip?size=1000"))
        wrapped = await http(HttpRequestInfo("GET", f"{server.base_url}/deflate"))
        raw = await http(HttpRequestInfo("GET", f"{server.base_url}/raw-deflate"))
        twice = await http(HttpRequestInfo("GET", f"{server.base_url}/gzip-gzip?size=1000"))
    assert gzipped.text == "\0" * 1000
    assert twice.text == "\0" * 1000
    assert wrapped.body == {"packed": "zlib"}
    assert raw.body == {"packed": "raw"}
    # The handler asks only for what it can decode.
    assert server.requests[-1]["headers"]["Accept-Encoding"] == "gzip, deflate"


async def test_a_gzip_bomb_over_the_cap_is_refused_though_small_on_the_wire(server: LocalHTTPServer) -> None:
    # 11 MiB of zeros gzip to about 11 KiB: under the 10 MiB cap on the wire, over it once decoded.
    async with DefaultHttpRequestHandler() as http:
        with pytest.raises(DeclarativeActionError, match="max_response_body_bytes=10,485,760"):
            await http(HttpRequestInfo("GET", f"{server.base_url}/gzip?size={11 * 1024 * 1024}"))
        # A bomb in the inner of two gzip layers is caught at that stage too.
        with pytest.raises(DeclarativeActionError, match="exceeds"):
            await http(HttpRequestInfo("GET", f"{server.base_url}/gzip-gzip?size={11 * 1024 * 1024}"))
        # Under the cap the same route is fine.
        ok = await http(HttpRequestInfo("GET", f"{server.base_url}/gzip?size={1024 * 1024}"))
    assert ok.text is not None and len(ok.text) == 1024 * 1024


async def test_a_clients_own_accept_encoding_is_kept_when_the_handler_can_decode_it(server: LocalHTTPServer) -> None:
    async with httpx.AsyncClient(headers={"Accept-Encoding": "identity"}) as plain:
        await DefaultHttpRequestHandler(client=plain)(HttpRequestInfo("GET", f"{server.base_url}/text"))
    assert server.requests[-1]["headers"]["Accept-Encoding"] == "identity"
    async with httpx.AsyncClient(headers={"Accept-Encoding": "br, gzip"}) as wider:
        await DefaultHttpRequestHandler(client=wider)(HttpRequestInfo("GET", f"{server.base_url}/text"))
    assert server.requests[-1]["headers"]["Accept-Encoding"] == "gzip, deflate"


async def test_the_cap_holds_on_the_wire_and_other_encodings_are_refused(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler(max_response_body_bytes=1000) as http:
        assert (await http(HttpRequestInfo("GET", f"{server.base_url}/big?size=1000"))).body == "a" * 1000
        with pytest.raises(DeclarativeActionError, match="max_response_body_bytes=1,000"):
            await http(HttpRequestInfo("GET", f"{server.base_url}/big?size=1001"))
        with pytest.raises(DeclarativeActionError, match="'br' is not supported"):
            await http(HttpRequestInfo("GET", f"{server.base_url}/br"))
    with pytest.raises(ValueError, match="positive"):
        DefaultHttpRequestHandler(max_response_body_bytes=0)


async def test_cookies_are_not_kept_by_the_handlers_own_client(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler() as http:
        first = await http(HttpRequestInfo("GET", f"{server.base_url}/set-cookie"))
        second = await http(HttpRequestInfo("GET", f"{server.base_url}/echo"))
        explicit = await http(HttpRequestInfo("GET", f"{server.base_url}/echo", headers={"Cookie": "mine=1"}))
    assert first.headers["set-cookie"] == "session=abc; Path=/"  # visible in the result
    assert "cookie" not in second.body["headers"]  # but never replayed
    assert explicit.body["headers"]["cookie"] == "mine=1"  # a Cookie header the workflow sets is sent


async def test_a_callers_client_keeps_its_cookies_and_is_not_closed(server: LocalHTTPServer) -> None:
    async with httpx.AsyncClient() as client:
        async with DefaultHttpRequestHandler(client=client) as http:
            await http(HttpRequestInfo("GET", f"{server.base_url}/set-cookie"))
            second = await http(HttpRequestInfo("GET", f"{server.base_url}/echo"))
        assert second.body["headers"]["cookie"] == "session=abc"
        assert not client.is_closed


async def test_redirects_are_results_unless_the_client_follows_them(server: LocalHTTPServer) -> None:
    target = f"{server.base_url}/echo"
    async with DefaultHttpRequestHandler() as http:
        result = await http(HttpRequestInfo("GET", f"{server.base_url}/redirect?to={target}"))
    assert (result.status_code, result.headers["location"]) == (302, target)
    async with httpx.AsyncClient(follow_redirects=True) as client:
        followed = await DefaultHttpRequestHandler(client=client)(
            HttpRequestInfo("GET", f"{server.base_url}/redirect?to={target}")
        )
    assert followed.status_code == 200 and followed.body["path"] == "/echo"


async def test_client_provider_picks_the_client_per_request_and_sees_the_composed_url(
    server: LocalHTTPServer,
) -> None:
    seen: list[HttpRequestInfo] = []
    async with httpx.AsyncClient(headers={"X-From": "provider"}) as client:

        async def provider(info: HttpRequestInfo) -> httpx.AsyncClient | None:
            seen.append(info)
            return client if "/echo" in info.url else None

        async with DefaultHttpRequestHandler(client_provider=provider) as http:
            echoed = await http(HttpRequestInfo("GET", f"{server.base_url}/echo", query_parameters={"k": "v"}))
            await http(HttpRequestInfo("GET", f"{server.base_url}/text"))
        assert not client.is_closed
    assert echoed.body["headers"]["x-from"] == "provider"
    assert seen[0].url == f"{server.base_url}/echo?k=v" and seen[0].query_parameters == {}


async def test_concurrent_first_requests_share_one_owned_client_and_aclose_closes_it(server: LocalHTTPServer) -> None:
    http = DefaultHttpRequestHandler()
    results = await asyncio.gather(*(http(HttpRequestInfo("GET", f"{server.base_url}/text")) for _ in range(5)))
    assert all(r.status_code == 200 for r in results)
    ports = {r["headers"].get("Host") for r in server.requests[-5:]}
    assert ports == {f"127.0.0.1:{server.port}"}
    await http.aclose()
    # After aclose the handler makes a fresh client on the next request rather than using a closed one.
    assert (await http(HttpRequestInfo("GET", f"{server.base_url}/text"))).status_code == 200
    await http.aclose()


async def test_timeout_ms_bounds_the_request(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler() as http:
        with pytest.raises(ServiceTimeoutError, match="/slow"):
            await http(HttpRequestInfo("GET", f"{server.base_url}/slow?seconds=1", timeout_ms=200))
        assert (await http(HttpRequestInfo("GET", f"{server.base_url}/slow?seconds=0", timeout_ms=2000))).body == "late"


async def test_transport_failures_raise() -> None:
    port = free_port()  # nothing listens here
    async with DefaultHttpRequestHandler() as http:
        with pytest.raises(ServiceConnectionError, match=f"127.0.0.1:{port}"):
            await http(HttpRequestInfo("GET", f"http://127.0.0.1:{port}/"))


# -- allowed_urls ------------------------------------------------------------------------------------------------
async def test_allowed_urls_admits_prefixes_and_refuses_everything_else_by_name(server: LocalHTTPServer) -> None:
    http = DefaultHttpRequestHandler(allowed_urls=[f"{server.base_url}/echo"])
    try:
        assert (await http(HttpRequestInfo("GET", f"{server.base_url}/echo?x=1"))).status_code == 200
        assert (await http(HttpRequestInfo("GET", f"{server.base_url}/echo/deeper"))).status_code == 404
        refused = [
            f"{server.base_url}/echoes",  # not a path-segment continuation
            f"{server.base_url}/echo/../text",  # dot segments are resolved before comparing
            f"{server.base_url}/echo/%2e%2E/text",  # encoded ones too
            f"http://localhost:{server.port}/echo",  # another host name
            f"https://127.0.0.1:{server.port}/echo",  # another scheme
            f"http://127.0.0.1:{server.port}@169.254.169.254/echo",  # credentials trick
        ]
        for url in refused:
            with pytest.raises(DeclarativeActionError, match="not under any of allowed_urls") as info:
                await http(HttpRequestInfo("GET", url))
            assert repr(url) in str(info.value)
        count = len(server.requests)
        with pytest.raises(DeclarativeActionError):
            await http(HttpRequestInfo("GET", f"{server.base_url}/text"))
        assert len(server.requests) == count  # refused before anything was sent
    finally:
        await http.aclose()


async def test_allowed_urls_is_checked_for_every_redirect_the_client_follows(server: LocalHTTPServer) -> None:
    outside = f"http://localhost:{server.port}/echo"
    async with httpx.AsyncClient(follow_redirects=True) as client:
        http = DefaultHttpRequestHandler(client=client, allowed_urls=[f"{server.base_url}/"])
        with pytest.raises(DeclarativeActionError, match=r"redirect.*localhost"):
            await http(HttpRequestInfo("GET", f"{server.base_url}/redirect?to={outside}"))
        inside = await http(HttpRequestInfo("GET", f"{server.base_url}/redirect?to={server.base_url}/echo"))
    assert inside.status_code == 200
    assert not any(r["headers"].get("Host", "").startswith("localhost") for r in server.requests)


def test_allowed_urls_entries_must_be_absolute_http_urls() -> None:
    with pytest.raises(ValueError, match=r"allowed_urls entry 'example\.com'"):
        DefaultHttpRequestHandler(allowed_urls=["example.com"])


# -- in a workflow ---------------------------------------------------------------------------------------------
WORKFLOW = """\
name: http-end-to-end
actions:
  - kind: HttpRequestAction
    id: fetch
    method: post
    url: =Concatenate(Env.BASE, "/echo")
    queryParameters:
      city: =inputs.city
    headers:
      X-Trace: =inputs.trace
    body: =inputs.payload
    response: Local.reply
    responseHeaders: Local.replyHeaders
  - kind: SendActivity
    activity:
      text: =Concat(Local.reply.method, " ", Local.reply.path, " ", Local.reply.body)
"""


async def test_a_workflow_reaches_http_through_the_default_handler(server: LocalHTTPServer) -> None:
    async with DefaultHttpRequestHandler(allowed_urls=[f"{server.base_url}/echo"]) as http:
        factory = WorkflowFactory(http_request_handler=http, configuration={"BASE": server.base_url})
        workflow = factory.create_workflow_from_yaml(WORKFLOW)
        result = await workflow.run({"city": "Oslo", "trace": "t-9", "payload": "ping"})
        assert result.get_outputs() == ["POST /echo?city=Oslo ping"]
        assert server.requests[-1]["headers"]["X-Trace"] == "t-9"

        outside = WorkflowFactory(http_request_handler=http, configuration={"BASE": f"http://localhost:{server.port}"})
        count = len(server.requests)
        with pytest.raises(DeclarativeActionError) as failure:
            await outside.create_workflow_from_yaml(WORKFLOW).run({"city": "x", "trace": "t", "payload": "p"})
    assert f"'http://localhost:{server.port}/echo?city=x'" in str(failure.value)
    assert len(server.requests) == count


async def test_a_workflows_request_timeout_reaches_the_handler(server: LocalHTTPServer) -> None:
    slow = """\
name: slow
actions:
  - kind: HttpRequestAction
    url: =Concatenate(Env.BASE, "/slow?seconds=1")
    requestTimeoutInMilliseconds: 150
    response: Local.reply
"""
    async with DefaultHttpRequestHandler() as http:
        workflow = WorkflowFactory(http_request_handler=http, configuration={"BASE": server.base_url})
        with pytest.raises(ServiceTimeoutError, match="/slow"):
            await workflow.create_workflow_from_yaml(slow).run({})


async def test_a_non_2xx_status_fails_the_action_naming_url_and_status(server: LocalHTTPServer) -> None:
    failing = """\
name: failing
actions:
  - kind: HttpRequestAction
    id: fetch
    url: =Concatenate(Env.BASE, "/echo?status=503")
    response: Local.reply
"""
    async with DefaultHttpRequestHandler() as http:
        workflow = WorkflowFactory(http_request_handler=http, configuration={"BASE": server.base_url})
        with pytest.raises(DeclarativeActionError, match=r"'fetch'.*/echo\?status=503' failed with status code 503"):
            await workflow.create_workflow_from_yaml(failing).run({})


async def test_the_references_body_kinds_are_sent_as_its_executor_sends_them(server: LocalHTTPServer) -> None:
    bodies = """\
name: bodies
actions:
  - kind: HttpRequestAction
    method: POST
    url: =Concatenate(Env.BASE, "/echo")
    body:
      kind: json
      content:
        city: =inputs.city
        days: 3
    response: Local.json
  - kind: HttpRequestAction
    method: POST
    url: =Concatenate(Env.BASE, "/echo")
    body:
      kind: RawRequestContent
      content: =Concat("city=", inputs.city)
      contentType: application/x-www-form-urlencoded
    response: Local.raw
  - kind: HttpRequestAction
    method: POST
    url: =Concatenate(Env.BASE, "/echo")
    body:
      kind: none
    response: Local.none
  - kind: SendActivity
    activity:
      text: =Concat(Local.json.body, " | ", Local.raw.body, " | ", Local.raw.headers.accept, " | ", Local.none.body)
"""
    async with DefaultHttpRequestHandler() as http:
        workflow = WorkflowFactory(http_request_handler=http, configuration={"BASE": server.base_url})
        result = await workflow.create_workflow_from_yaml(bodies).run({"city": "Oslo"})
    assert result.get_outputs() == ['{"city": "Oslo", "days": 3} | city=Oslo | */* | ']
    json_request, raw_request, none_request = server.requests[-3:]
    assert json_request["headers"]["Content-Type"] == "application/json"
    assert raw_request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert "Content-Type" not in none_request["headers"]
