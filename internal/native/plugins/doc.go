// Package plugins owns plugin tools: reload_plugins, and the dispatcher
// that runs plugin tools when clients call them.
//
// Go cannot load EVOKORE-MCP's JavaScript plugins, so a plugin here is a
// folder under EVOKORE_PLUGINS_DIR with a plugin.json manifest (validated
// by #PluginManifest in schema/plugin.cue: name, version, description,
// tools with input schemas and annotations, the command that runs them and
// a timeout) and whatever program the command names. A call runs that
// program in the plugin's folder, in a process group of its own, writes
// the arguments to its stdin as JSON and reads one MCP tool result from
// its stdout. The whole group is killed when the call's timeout (default
// 30 s) runs out or the client cancels the call.
//
// Loading reads every folder's plugin.json, in name order. A broken
// manifest is reported with its file:line:col and skipped; so is a tool
// whose name a native tool or an earlier plugin already takes. The tools
// of the plugins that loaded are published to the catalog right after the
// natives; reload_plugins does it all again and swaps them in one step.
//
// examples/hello is a complete plugin in POSIX sh.
package plugins
