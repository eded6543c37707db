// evokore's host for EVOKORE-MCP JavaScript plugins (plugins/*.js).
//
// The router starts it with `node -e <this file> -- <mode> ...` and talks
// JSON over stdio; each start does one thing and exits:
//   list <file>...      load each plugin, print {"plugins": [...]}: per file
//                       its name, version, tools and resources, or an error
//   call <file> <tool>  read the arguments (JSON) on stdin, print the tool
//                       result ({"content": [...]})
//   read <file> <uri>   print the resource's {"text": ...}
//
// A plugin exports {name, version?, register(context)} (or the same as
// `default`); context offers addTool(name, {description, inputSchema,
// annotations}, handler), addResource(uri, {name, mimeType, description},
// handler) and log(message). emitWebhook and onWebhookEvent exist so that
// plugins written for the original load, and do nothing.
//
// stdout is the protocol: whatever a plugin prints goes to stderr.
'use strict';

const reply = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.info = console.debug = console.error;

function finish(value, code) {
  reply(JSON.stringify(value) + '\n', () => process.exit(code));
}

function message(err) {
  return err && err.message ? err.message : String(err);
}

async function load(file) {
  const mod = require(file);
  const plugin = (mod && mod.default) || mod;
  if (!plugin || typeof plugin.register !== 'function') {
    throw new Error('Plugin must export a register(context) function');
  }
  if (!plugin.name || typeof plugin.name !== 'string') {
    throw new Error('Plugin must export a name string');
  }
  const loaded = {
    name: plugin.name,
    version: typeof plugin.version === 'string' ? plugin.version : '0.0.0',
    tools: [],
    resources: [],
  };
  const context = {
    addTool(name, schema, handler) {
      if (!name || typeof name !== 'string') throw new Error('Tool name must be a non-empty string');
      if (typeof handler !== 'function') throw new Error(`Tool '${name}' handler must be a function`);
      schema = schema || {};
      loaded.tools.push({
        name,
        description: schema.description || 'No description provided.',
        inputSchema: schema.inputSchema || { type: 'object', properties: {} },
        annotations: schema.annotations,
        handler,
      });
    },
    addResource(uri, meta, handler) {
      if (!uri || typeof uri !== 'string') throw new Error('Resource URI must be a non-empty string');
      if (typeof handler !== 'function') throw new Error(`Resource '${uri}' handler must be a function`);
      meta = meta || {};
      loaded.resources.push({ uri, name: meta.name || uri, mimeType: meta.mimeType, description: meta.description, handler });
    },
    log(msg) {
      console.error(`[EVOKORE][plugin:${plugin.name}] ${msg}`);
    },
    emitWebhook() {},
    onWebhookEvent() {},
  };
  await plugin.register(context);
  return loaded;
}

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

async function main(mode, args) {
  switch (mode) {
    case 'list': {
      const plugins = [];
      for (const file of args) {
        try {
          const p = await load(file);
          plugins.push({
            file,
            name: p.name,
            version: p.version,
            tools: p.tools.map(({ handler, ...t }) => t),
            resources: p.resources.map(({ handler, ...r }) => r),
          });
        } catch (err) {
          plugins.push({ file, error: message(err) });
        }
      }
      return finish({ plugins }, 0);
    }
    case 'call': {
      const [file, name] = args;
      const input = JSON.parse((await readStdin()) || '{}');
      const tool = (await load(file)).tools.find((t) => t.name === name);
      if (!tool) throw new Error(`the plugin no longer has a tool '${name}'`);
      let result;
      try {
        result = await tool.handler(input);
      } catch (err) {
        return finish({ content: [{ type: 'text', text: message(err) }], isError: true }, 0);
      }
      if (!result || !Array.isArray(result.content)) {
        const text = typeof result === 'string' ? result : JSON.stringify(result === undefined ? null : result);
        result = { content: [{ type: 'text', text }] };
      }
      return finish(result, 0);
    }
    case 'read': {
      const [file, uri] = args;
      const res = (await load(file)).resources.find((r) => r.uri === uri);
      if (!res) throw new Error(`the plugin no longer has a resource '${uri}'`);
      const out = await res.handler();
      return finish({ text: out && out.text !== undefined ? String(out.text) : String(out) }, 0);
    }
  }
  throw new Error(`unknown mode ${mode}`);
}

main(process.argv[1], process.argv.slice(2)).catch((err) => {
  console.error(message(err));
  process.exit(1);
});
