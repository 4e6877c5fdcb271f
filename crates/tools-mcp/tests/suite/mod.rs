//! The tools-mcp suite: one module per concern of serving a registry over MCP.

mod calls;
mod rmcp_client;
