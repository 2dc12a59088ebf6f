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
});
