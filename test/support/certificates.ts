import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A private CA and a server certificate it signed, as PEM files in a temp dir of their own. */
export interface TestCertificates {
  dir: string;
  /** The CA that signed the server certificate. */
  caFile: string;
  /** Another CA, which signed nothing the test servers present ("a wrong CA file"). */
  otherCaFile: string;
  serverCert: string;
  serverKey: string;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
  ]);
}

/**
 * Makes the files with openssl, as a platform's private CA would: the server certificate names 127.0.0.1 (IP)
 * and localhost (DNS). `owner` (a uid/gid) gets the key, for a server that runs as another user (PostgreSQL
 * also wants the key readable by its owner only).
 */
export function makeCertificates(owner?: { uid: number; gid: number }): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), 'stockroom-tls-'));
  makeCa(dir, 'stockroom-test-ca');
  makeCa(dir, 'some-other-ca');
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  ]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'stockroom-test-ca.crt',
    '-CAkey',
    'stockroom-test-ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.crt',
  ]);
  const serverKey = path.join(dir, 'server.key');
  chmodSync(serverKey, 0o600);
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    for (const file of ['server.key', 'server.crt', 'stockroom-test-ca.crt'])
      chownSync(path.join(dir, file), owner.uid, owner.gid);
  }
  return {
    dir,
    caFile: path.join(dir, 'stockroom-test-ca.crt'),
    otherCaFile: path.join(dir, 'some-other-ca.crt'),
    serverCert: path.join(dir, 'server.crt'),
    serverKey,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Whether every binary is on this machine; else the reason a test that needs them is skipped. */
export function missingBinary(binaries: string[]): string | undefined {
  for (const binary of binaries) {
    try {
      execFileSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' });
    } catch {
      return `${binary} is not installed`;
    }
  }
  return undefined;
}
