/** The MCP endpoint's route, whose refusals are JSON-RPC errors. */
export const MCP_ROUTE = '/t/:tenant/mcp';
