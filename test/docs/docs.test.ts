import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { withSettingsReference } from '../../config/settings-reference.js';
import { ADJUST_REASONS, REASON_ALIASES } from '../../domain/inventory/reasons.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const PAGES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).map(f => `docs/${f}`)].filter(f =>
  f.endsWith('.md'),
);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const headings = read(file)
    .split('\n')
    .filter(line => /^#{1,6} /.test(line))
    .map(line => anchorOf(line.replace(/^#+ /, '')));
  return new Set(headings);
}

/** The markdown links of a page: `[text](target)` and `<scheme:...>` autolinks. */
const linksOf = (page: string) =>
  [...read(page).matchAll(/\]\(([^)\s]+)\)|<([a-z]+:[^>\s]+)>/g)].map(m => m[1] ?? m[2]);

/**
 * The wire contract's operation ids (A1, I8, H4, N11, X2, P6, R1, S1, Y1...): letters and one or two digits as a
 * word. Fenced code blocks are examples, not prose, and are left out; so are a percentile (P50, P99) and the
 * object store (Amazon S3, an S3 bucket), which read like ids but are not.
 */
function contractIdsIn(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/\b[AISHYNXPR]\d{1,2}\b/g)]
    .filter(m => !/^P(50|75|90|95|99)$/.test(m[0]))
    .filter(m => !(m[0] === 'S3' && /Amazon $/.test(prose.slice(0, m.index))))
    .filter(m => !(m[0] === 'S3' && /^[- ](bucket|compatible|storage)/.test(prose.slice(m.index + 2))))
    .map(m => `${m[0]} in "${prose.slice(Math.max(0, m.index - 30), m.index + 30).replace(/\s+/g, ' ')}"`);
}

/** Source files a person reads for the why, not for a bench run (benchmarks and tests may cite figures). */
function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap(entry => {
    const relative = `${dir}/${entry}`;
    if (relative === 'scripts/bench') return [];
    if (statSync(path.join(ROOT, relative)).isDirectory()) return sourceFiles(relative);
    return relative.endsWith('.ts') ? [relative] : [];
  });
}

describe('Documentation', () => {
  it('When the configuration schema changes, then docs/operations.md lists every variable as the schema says (npm run docs:config)', () => {
    const page = read('docs/operations.md');
    expect(page, 'run `npm run docs:config`').to.equal(withSettingsReference(page));
  });

  it('When a page links to a file or a heading of the repository, then it exists', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file, anchor] = target.split('#');
        const resolved = file ? path.normalize(path.join(path.dirname(page), file)) : page;
        if (!existsSync(path.join(ROOT, resolved))) broken.push(`${page}: ${target}`);
        else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor))
          broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('When a page links or points somewhere, then it stays inside the repository (a clone has no ../shared/)', () => {
    const outside: string[] = [];
    for (const page of PAGES) {
      const pointers = read(page).match(/(\.\.\/)+shared\b[^\s`)]*|\bshared\/(contract|spec)\b[^\s`)]*/g);
      for (const pointer of pointers ?? []) outside.push(`${page}: ${pointer}`);
      for (const target of linksOf(page)) {
        if (/^(https?|mailto):/.test(target)) continue;
        const file = target.split('#')[0];
        const relative = path.normalize(path.join(path.dirname(page), file));
        if (/^[a-z]+:/.test(target) || path.isAbsolute(file) || relative.startsWith('..'))
          outside.push(`${page}: ${target}`);
      }
    }
    expect(outside).to.deep.equal([]);
  });

  it("When a client developer or operator reads README.md, docs/api.md or docs/operations.md, then no operation is named by the contract's id (A1, I8, N11...)", () => {
    const found = ['README.md', 'docs/api.md', 'docs/operations.md'].flatMap(page =>
      contractIdsIn(read(page)).map(id => `${page}: ${id}`),
    );
    expect(found).to.deep.equal([]);
  });

  it('When the contract-id check reads a page, then it finds an id and leaves bolts, powers, percentiles and S3 alone', () => {
    expect(contractIdsIn('the analytics reads (N1-N11, X1-X3) and R1; H4')).to.have.length(6);
    const found = contractIdsIn(
      'M8 bolts, 10^7 entries, p99 and P99 latency, an S3 bucket, Amazon S3; see I8',
    );
    expect(found.map(id => id.split(' ')[0])).to.deep.equal(['I8']);
    expect(contractIdsIn('```\nN1\n```\n')).to.deep.equal([]);
  });

  it('When a client developer reads docs/api.md, then it explains the health checks, sign-out, the items page, the authorities and every change reason with its aliases', () => {
    const page = read('docs/api.md');
    const operations = [
      'GET /health',
      'GET /api/health',
      'GET /api/health/db',
      'POST /logout',
      'GET /api/items',
      'GET /api/me/authorities',
    ].filter(operation => !new RegExp(`\`${operation}[\`?]`).test(page));
    const reasons = ADJUST_REASONS.filter(reason => !page.includes(`\`${reason}\``));
    const aliases = Object.entries(REASON_ALIASES)
      .map(([alias, reason]) => `\`${alias}\` → \`${reason}\``)
      .filter(alias => !page.includes(alias));
    expect({ operations, reasons, aliases }).to.deep.equal({ operations: [], reasons: [], aliases: [] });
  });

  it('When a newcomer opens the README, then it fits in 250 lines and 2,000 words', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).to.be.at.most(250);
    expect(readme.split(/\s+/).filter(Boolean).length).to.be.at.most(2000);
  });

  it('When a newcomer looks for how to set the port, how to deploy and where the settings are, then the README says', () => {
    const readme = read('README.md');
    expect(readme).to.match(/`PORT`/);
    expect(readme).to.contain('docs/operations.md#configuration');
    for (const deployFact of [
      'REDIS_TLS_REJECT_UNAUTHORIZED=false',
      'BOOTSTRAP_ADMIN_USERNAME',
      'npm run user:create',
    ])
      expect(readme).to.contain(deployFact);
  });

  it('When Node.js is too old, then the message points at a README section that exists', () => {
    const [, section] = /see the README, ([A-Za-z ]+)\)/.exec(read('scripts/supported-node.ts')) ?? [];
    expect(section, 'scripts/supported-node.ts names a README section').to.be.a('string');
    expect(anchorsOf('README.md').has(anchorOf(section))).to.equal(true);
  });

  it('When a source comment explains a choice, then it gives the reason, not bench figures (docs/performance.md holds them)', () => {
    // Units of a measurement, and the shapes a measured comparison takes ("0.2 s instead of 3.3 s", "took 3x
    // as long", "took 8"); design constants (a 30 s timeout) are whole seconds and stay allowed.
    const figure =
      /^\s*(\/\/|\*|\/\*).*(\d[\d,.]*\s*(ms|MB|KB|GB|µs|us|events\/s|req\/s|writes\/s|rows\/s|entries\/s)\b|\b\d+\.\d+\s?s\b|\btook \d|\d(\.\d+)?x (as|faster|slower)\b|instead of \d)/;
    const found = ['api', 'domain', 'workers', 'config', 'scripts'].flatMap(dir =>
      sourceFiles(dir).flatMap(file =>
        read(file)
          .split('\n')
          .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
          .filter(({ line }) => figure.test(line))
          .map(({ at, line }) => `${at} ${line.trim()}`),
      ),
    );
    expect(found).to.deep.equal([]);
  });
  it('When a maintainer reads docs/performance.md, then it states the current figures, not a lab notebook', () => {
    const page = read('docs/performance.md');
    for (const notebook of [
      /this session/i,
      /\bissue \d+ asks\b/i,
      /\bthis branch\b/i,
      /\bwhat this session\b/i,
    ])
      expect(page, `${notebook}`).not.to.match(notebook);
    const partitions = /export const OUTBOX_PARTITIONS = (\d+);/.exec(
      read('domain/outbox/drain-consumer.ts'),
    )?.[1];
    expect(page, 'OUTBOX_PARTITIONS is a constant, not a setting').to.contain(
      `**${partitions} outbox partitions`,
    );
    expect(page).to.match(/`OUTBOX_PARTITIONS` is a constant/);
    expect(read('docs/operations.md')).not.to.contain('OUTBOX_PARTITIONS');
  });

  it('When docs/performance.md describes `npm run bench`, then it names exactly the npm benchmarks scripts/bench/all.ts runs', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const allTs = read('scripts/bench/all.ts');
    const row = read('docs/performance.md')
      .split('\n')
      .find(line => line.startsWith('| `npm run bench` |'));
    expect(row, 'a row for `npm run bench`').to.be.a('string');
    for (const [name, command] of Object.entries(scripts)) {
      const file = /(?:^|&& )tsx scripts\/bench\/([\w-]+)\.ts$/.exec(command)?.[1];
      if (!name.startsWith('bench:') || !file) continue;
      const runByAll = allTs.includes(`from './${file}.js'`);
      expect(
        row!.includes(`\`${name}\``),
        `${name} ${runByAll ? 'is' : 'is not'} run by npm run bench`,
      ).to.equal(runByAll);
    }
  });

  it('When the README\'s "How fast" table gives a figure, then docs/performance.md\'s figures give it too', () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('## How fast'), readme.indexOf('Details, methods'));
    const perf = read('docs/performance.md');
    const figures = perf.slice(perf.indexOf('<!-- figures:start -->'), perf.indexOf('<!-- figures:end -->'));
    const missing = table
      .split('\n')
      .filter(line => line.startsWith('| ') && !line.startsWith('| on a'))
      .flatMap(line =>
        [...(line.split('|')[2] ?? '').matchAll(/\d[\d,]*\.\d+|\d{1,3}(?:,\d{3})+/g)].map(m => m[0]),
      )
      .filter(figure => !figures.includes(figure));
    expect(missing).to.deep.equal([]);
  });

  it("When a maintainer reads docs/architecture.md, then its code map names every folder of api/ and domain/, and the worker's scale agrees with the outbox", () => {
    const page = read('docs/architecture.md');
    const map = page.slice(page.indexOf('## Code map'), page.indexOf('The modules of `domain/` depend'));
    const folders = ['api', 'domain'].flatMap(dir =>
      readdirSync(path.join(ROOT, dir), { withFileTypes: true })
        .filter(entry => entry.isDirectory())
        .map(entry => entry.name),
    );
    expect(folders.filter(folder => !new RegExp(`\\b${folder}\\b`).test(map))).to.deep.equal([]);
    expect(map).to.match(/^client\//m);
    expect(page).not.to.contain('as many as you like:');
    for (const file of [
      'api/routing/write-handler.ts',
      'domain/outbox/publish-events.ts',
      'domain/inventory/adjust-quantity.ts',
      'domain/outbox/outbox-insert.ts',
      'domain/outbox/stock-changed-payload.ts',
    ])
      expect(page).to.contain(file);
  });
});
