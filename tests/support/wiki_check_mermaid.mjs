// Parses Mermaid blocks with the official `mermaid` package under node
// (jsdom provides the DOM its sanitizer needs; nothing is rendered, no
// browser is used). Input on stdin: a JSON array of block texts. Output on
// stdout: a JSON array, `null` for a block that parses, else the parser's
// error message. The packages come from MERMAID_NODE_MODULES (test.sh
// installs them into target/npm-wiki).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const modules = process.env.MERMAID_NODE_MODULES;
const require = createRequire(modules + '/');
const { JSDOM } = require('jsdom');
const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import(pathToFileURL(modules + '/mermaid/dist/mermaid.core.mjs'));
mermaid.initialize({ startOnLoad: false });

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const block of JSON.parse(input)) {
  try {
    await mermaid.parse(block);
    results.push(null);
  } catch (error) {
    results.push(String((error && error.message) || error));
  }
}
process.stdout.write(JSON.stringify(results));
