#!/bin/sh
# An evokore plugin tool: the call's arguments arrive on stdin as one JSON
# object, and the tool result goes to stdout as one JSON object.
#
# POSIX sh has no JSON parser, so this reads the "name" string with sed and
# keeps only characters that need no escaping in JSON.
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p' | tr -cd 'A-Za-z0-9 ._-')
[ -n "$name" ] || name=World
printf '{"content":[{"type":"text","text":"Hello, %s! (from the %s tool of an evokore plugin)"}]}\n' "$name" "$EVOKORE_TOOL_NAME"
