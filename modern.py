import anyio, sys
from mcp import Client
async def main():
    for mode in ["auto", "2026-07-28"]:
        async with Client("http://127.0.0.1:33305/mcp", mode=mode) as c:
            print(mode, c.session.protocol_version if hasattr(c,'session') else '?')
            tools = await c.list_tools()
            print([t.name for t in tools.tools])
            r = await c.call_tool("check", {"rules": ["TL004"]})
            print(r.is_error, (r.structured_content or {}).get("scanned"))
            r = await c.call_tool("explain", {"code": "nope"})
            print(r.is_error, r.content[0].text[:80])
anyio.run(main)
