// A plugin written for EVOKORE-MCP's JavaScript contract: the shape of its
// shipped example-hello plugin (a hello_world tool with an optional name),
// plus a resource, a log line and a stray print to stdout.
module.exports = {
  name: 'example-hello',
  version: '1.0.0',
  register(context) {
    context.log('adding hello_world');
    console.log('a plugin printing to stdout must not break the protocol');
    context.addTool(
      'hello_world',
      {
        description: 'Greets someone by name.',
        inputSchema: { type: 'object', properties: { name: { type: 'string', description: 'Who to greet' } } },
      },
      async (args) => ({
        content: [{ type: 'text', text: `Hello, ${(args && args.name) || 'World'}! (from the example-hello plugin)` }],
      }),
    );
    context.addTool('plugin_fails', { description: 'Always throws.' }, () => {
      throw new Error('the handler gave up');
    });
    context.addResource(
      'plugin://example-hello/motd',
      { name: 'Message of the day', mimeType: 'text/plain', description: 'A fixed line.' },
      async () => ({ text: 'Plugins run under node.' }),
    );
  },
};
