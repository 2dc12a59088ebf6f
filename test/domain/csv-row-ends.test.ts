import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { expect } from 'chai';
import { csvRowEnds } from '../../domain/shared/csv-copy.js';

/** Rows as COPY writes them for copyCsvSql (an empty last column: each row ends with the delimiter and LF). */
const copyRows = (d: string) =>
  [
    `a${d}b${d}\n`,
    `"x${d}""\n"${d}y${d}\n`,
    `"${d}"${d}"\n${d}\n"${d}\n`,
    `${d}${d}\n`,
    `"""quoted"""${d}"line\r\nend"${d}\n`,
    `last${d}"${d}\n${d}"${d}\n`,
  ].join('');

/** The rows the writer writes: CRLF row ends, cells unchanged. */
const writerRows = (d: string) =>
  [
    'a' + d + 'b\r\n',
    `"x${d}""\n"${d}y\r\n`,
    `"${d}"${d}"\n${d}\n"\r\n`,
    `${d}\r\n`,
    `"""quoted"""${d}"line\r\nend"\r\n`,
    `last${d}"${d}\n${d}"\r\n`,
  ].join('');

async function through(chunks: Buffer[], delimiter: string): Promise<string> {
  // Copies: the step writes into the chunks it is given.
  const source = Readable.from(
    chunks.map(c => Buffer.from(c)),
    { objectMode: false },
  );
  return (await buffer(source.pipe(csvRowEnds(Buffer.from('HEAD\r\n'), delimiter)))).toString('utf8');
}

describe('COPY row ends -> CRLF (csvRowEnds)', () => {
  for (const delimiter of [',', ';'])
    it(`When COPY's bytes arrive split at any point (delimiter ${delimiter}), then the rows end in CRLF and no cell changes`, async () => {
      const input = Buffer.from(copyRows(delimiter));
      const expected = `HEAD\r\n${writerRows(delimiter)}`;
      expect(await through([input], delimiter)).to.equal(expected);
      for (let at = 0; at <= input.length; at++)
        expect(
          await through([input.subarray(0, at), input.subarray(at)], delimiter),
          `split at ${at}`,
        ).to.equal(expected);
      const bytes = Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
      expect(await through(bytes, delimiter), 'one byte at a time').to.equal(expected);
    });

  it('When COPY sends no rows, then only the head is written', async () => {
    expect(await through([], ',')).to.equal('HEAD\r\n');
  });
});
