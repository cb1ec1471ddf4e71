"""Resume an orchestration from a checkpoint in a fresh process and print what happened as one JSON line.

Usage: ``python orch_procs.py KIND CHECKPOINT_DIR CHECKPOINT_ID [RESPONSES_JSON [LATER_REPLIES_JSON]]``

``KIND`` names a scenario of ``orch_scenarios`` (``approval:<kind>`` for the approval variants).
``RESPONSES_JSON`` answers the requests pending in the checkpoint (``{request_id: value}``);
``LATER_REPLIES_JSON`` is a list of values that answer, one at a time, the requests raised afterwards
(``"__terminate__"`` ends a handoff conversation).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from orch_scenarios import DEPLOYS, SCENARIOS, approval_workflow, summary

from agentnb import AgentResponse, Message
from agentnb.workflows import FileCheckpointStorage, HandoffUserInputRequest


def _describe(value: Any) -> Any:
    if isinstance(value, AgentResponse) or (isinstance(value, list) and all(isinstance(m, Message) for m in value)):
        return summary(value)
    return repr(value)


def _reply(value: Any) -> Any:
    return HandoffUserInputRequest.terminate() if value == "__terminate__" else value


async def main(argv: list[str]) -> dict[str, Any]:
    kind, directory, checkpoint_id = argv[:3]
    responses = json.loads(argv[3]) if len(argv) > 3 else None
    later = json.loads(argv[4]) if len(argv) > 4 else []
    storage = FileCheckpointStorage(directory)
    if kind.startswith("approval:"):
        workflow = approval_workflow(kind.split(":", 1)[1], storage)
    else:
        workflow = SCENARIOS[kind](storage)
    result = await workflow.run(
        checkpoint_id=checkpoint_id, responses={k: _reply(v) for k, v in responses.items()} if responses else None
    )
    outputs = list(result.get_outputs())
    owners: list[str] = []
    for value in later:
        requests = result.get_request_info_events()
        assert len(requests) == 1, requests
        if isinstance(requests[0].data, HandoffUserInputRequest):
            owners.append(requests[0].data.agent_name)
        result = await workflow.run(responses={requests[0].request_id: _reply(value)})
        outputs.extend(result.get_outputs())
    return {
        "outputs": [_describe(o) for o in outputs],
        "owners": owners,
        "pending": [type(e.data).__name__ for e in result.get_request_info_events()],
        "state": result.get_final_state().value,
        "deploys": list(DEPLOYS),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
