"""An agent loop with remem's memory tools, over any OpenAI-compatible chat completion.

One turn: ``Memory.compile`` builds the prompt (the memory block goes in front of the
message, as quoted data); ``Memory.tool_specs`` gives the tools this run may offer (a DM:
remember, forget, recall); every tool call the model makes goes through
``Memory.run_tool`` with the host's envelope, whatever the model put in the arguments;
after the reply, ``Memory.writes`` of the run says whether the turn wrote memory, and
the host (never the model) shows the "Noted — see what I remember" chip.

    python examples/agent_loop.py --data ./remem-data --agent yuko \\
        --dm discord:456 --user discord:123 \\
        --base-url http://127.0.0.1:11434/v1 --model llama3.1 \\
        "Please remember that I prefer green tea."

``--data`` may be a ``remem serve`` URL instead (then give ``--token``). The example
needs only the standard library and remem.
"""

from __future__ import annotations

import argparse
import json
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from remem import Memory, RunContext

IDENTITY = "You are Yuko, a helpful assistant in a chat."
#: The most model round trips one turn may take (a model that loops on tools stops here).
MAX_STEPS = 6
CHIP = "Noted — see what I remember"


@dataclass
class Turn:
    """What the host shows after one turn: the reply, and the chip when memory changed."""

    reply: str
    chip: str | None
    receipts: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, dict[str, Any], bool]] = field(default_factory=list)


def chat(
    base_url: str,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    api_key: str | None = None,
) -> dict[str, Any]:
    """One chat completion (``POST {base_url}/chat/completions``): the assistant message."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=120) as response:
        data = json.loads(response.read())
    message: dict[str, Any] = data["choices"][0]["message"]
    return message


def arguments_of(call: dict[str, Any]) -> Any:
    """A tool call's arguments as the model sent them (JSON text); text that is not JSON is
    passed on as it is, and ``run_tool`` refuses it as a result the model can read."""
    raw = call.get("function", {}).get("arguments") or "{}"
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def run_turn(
    mem: Memory,
    ctx: RunContext,
    message: str,
    *,
    base_url: str,
    model: str,
    api_key: str | None = None,
) -> Turn:
    """One turn of the conversation ``ctx`` names (see the module docstring)."""
    prompt = mem.compile(ctx, message, identity=IDENTITY)
    tools = mem.tool_specs(ctx, style="openai")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompt.system},
        {"role": "user", "content": prompt.input},
    ]
    turn = Turn(reply="", chip=None)
    for _ in range(MAX_STEPS):
        reply = chat(base_url, model, messages, tools, api_key)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            turn.reply = reply.get("content") or ""
            break
        for call in calls:
            name = call.get("function", {}).get("name", "")
            args = arguments_of(call)
            result = mem.run_tool(ctx, name, args)
            turn.tool_calls.append((name, args, result.is_error))
            messages.append(
                {"role": "tool", "tool_call_id": call.get("id"), "content": result.text}
            )
    written = mem.writes(ctx, ctx.run_id)
    if written:  # the host attaches the chip: one per reply whose turn wrote memory
        turn.chip = CHIP
        turn.receipts = [w.receipt for w in written]
    return turn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="data directory or remem serve URL")
    parser.add_argument("--token", help="host token, for a remem serve URL")
    parser.add_argument("--agent", required=True)
    parser.add_argument("--dm", required=True, help="the DM channel id")
    parser.add_argument("--user", required=True, help="the member's user id")
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible API base URL")
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key")
    parser.add_argument("message")
    args = parser.parse_args(argv)
    with Memory.open(args.data, token=args.token) as mem:
        ctx = RunContext.dm(args.agent, args.dm, args.user)
        turn = run_turn(
            mem, ctx, args.message, base_url=args.base_url, model=args.model, api_key=args.api_key
        )
    print(turn.reply)
    if turn.chip:
        print(f"[{turn.chip}]")


if __name__ == "__main__":
    main()
