import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Issue 13: a clean install prints no "install scripts not yet covered by allowScripts" warning. */
describe('Install scripts of the dependencies', function () {
  this.timeout(30000);

  it('When npm lists install scripts not covered by allowScripts, then there are none (@scarf/scarf is denied)', async () => {
    const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls'], { cwd: ROOT });
    expect(stdout).to.contain('No packages with unreviewed install scripts');
  });
});
