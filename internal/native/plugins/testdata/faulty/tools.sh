#!/bin/sh
# One script serves every tool of the faulty plugin; EVOKORE_TOOL_NAME says
# which one was called.
case "$EVOKORE_TOOL_NAME" in
sleepy)
	echo $$ > "$EVOKORE_PLUGIN_DIR/../sleepy.pid"
	sleep 300 &
	echo $! > "$EVOKORE_PLUGIN_DIR/../sleepy-child.pid"
	wait
	;;
crash)
	echo boom >&2
	exit 3
	;;
garbled)
	echo hello
	;;
refuses)
	printf '{"content":[{"type":"text","text":"bad input"}],"isError":true}\n'
	;;
echo_args)
	args=$(cat)
	printf '{"content":[{"type":"text","text":"echoed"}],"structuredContent":%s}\n' "$args"
	;;
show_env)
	names=$(env | cut -d= -f1 | sort | tr '\n' ' ')
	printf '{"content":[{"type":"text","text":"%s| %s"}]}\n' "$names" "$GREETING"
	;;
leaves_helper)
	# The helper writes its own pid: setsid may fork first.
	setsid sh -c 'echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 300' "$EVOKORE_PLUGIN_DIR/../helper.pid" </dev/null >/dev/null 2>&1 &
	while [ ! -s "$EVOKORE_PLUGIN_DIR/../helper.pid" ]; do sleep 0.05; done
	printf '{"content":[{"type":"text","text":"left a helper"}]}\n'
	;;
esac
