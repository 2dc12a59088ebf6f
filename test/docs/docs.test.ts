import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { withSettingsReference } from '../../config/settings-reference.js';

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
