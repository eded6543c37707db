// Package plugins owns plugin tools: reload_plugins, and the dispatcher
// that runs plugin tools when clients call them.
//
// A plugin is either of two kinds.
//
// EVOKORE-MCP's own plugins, the top-level *.js files of
// EVOKORE_PLUGINS_DIR (module.exports = {name, version, register(context)},
// with context.addTool, addResource and log), run under node when it is on
// PATH: a small host script embedded in the binary (jshost.js) loads them
// and reports their tools and resources, loading each file in a process
// of its own (a few at once), and runs one tool call or resource read per
// process, so a plugin that hangs, exits or crashes costs that file or
// that call only. Their tools are published as plugin tools and their resources are
// listed after the router's own. Without node each file is skipped with a
// problem that names it.
//
// evokore's own plugins are folders under EVOKORE_PLUGINS_DIR with a
// plugin.json manifest (validated
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
