/**
 * The dependency rules of the code, checked by `npm run lint` (dependency-cruiser): no circular imports anywhere,
 * and the modules of domain/ depend only downward. A module may import its own files and the modules of lower
 * layers, never a module of its own layer or of a higher one. Type-only imports count too.
 */
const LAYERS = [
  ['shared'],
  ['queues', 'idempotency'],
  ['outbox'],
  ['users', 'suppliers', 'analytics', 'alerts'],
  ['inventory'],
  ['catalog', 'stock-history', 'purchasing'],
  ['imports', 'replenishment'],
];

const any = modules => `^domain/(${modules.join('|')})/`;

const layerRules = LAYERS.flatMap((layer, rank) => {
  const higher = LAYERS.slice(rank + 1).flat();
  return layer.map(module => {
    const barred = [...higher, ...layer.filter(peer => peer !== module)];
    return {
      name: `${module}-depends-only-downward`,
      comment: `domain/${module} may import only ${LAYERS.slice(0, rank).flat().join(', ') || 'itself'}`,
      severity: 'error',
      from: { path: `^domain/${module}/` },
      to: { path: barred.length ? any(barred) : '^$' },
    };
  });
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A circle of imports: move what both sides need down into the lower one (or domain/shared).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'shared-is-the-bottom',
      comment: 'domain/shared imports nothing of the project outside itself (no config, no module).',
      severity: 'error',
      from: { path: '^domain/shared/' },
      to: { path: '^(domain/(?!shared/)|config/|api/|workers/|scripts/)' },
    },
    {
      name: 'domain-below-its-callers',
      comment: 'domain/ never imports the API, the workers or the scripts that call it.',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: '^(api|workers|scripts)/' },
    },
    {
      name: 'modules-not-the-entity-list',
      comment: 'domain/entities.ts lists every entity for the ORM configuration; no module imports it.',
      severity: 'error',
      from: { path: '^domain/[^/]+/' },
      to: { path: '^domain/entities\\.ts$' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|coverage)/' },
  },
};
