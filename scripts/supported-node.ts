/**
 * Stops a process started by a Node.js older than Stockroom needs, with a message saying what to do, BEFORE
 * any module of the application is loaded: this module imports nothing, and the entry points (start-all.ts,
 * migrate.ts) import the rest only after it ran. Loaded by Node 20 (the system Node of many machines), the
 * application's modules fail while they are linked, before any of their code runs: `migrate` with a
 * SyntaxError about `node:fs`, the web process with a segmentation fault and no message at all.
 */
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 17)) {
  console.error(
    `Stockroom needs Node.js 22.17 or newer (24 LTS recommended); this is ${process.version} (${process.execPath}). ` +
      'After `npm install` the project brings Node 24 in node_modules/.bin: put it first on PATH, ' +
      'e.g. PATH="$PWD/node_modules/.bin:$PATH" (see the README, Prerequisites).',
  );
  process.exit(1);
}
