import { expect } from 'chai';
import { CopyOutCsvRows } from '../../domain/shared/csv-copy-out.js';

/** Rows as COPY writes them for copyCsvSql (an empty last column: each row ends with the delimiter and LF). */
const copyRows = (d: string) => [
  `a${d}b${d}\n`,
  `"x${d}""\n"${d}y${d}\n`,
  `"${d}"${d}"\n${d}\n"${d}\n`,
  `${d}${d}\n`,
  `"""quoted"""${d}"line\r\nend"${d}\n`,
  `last${d}"${d}\n${d}"${d}\n`,
];

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

/** One protocol message: its code, its length (itself included) and its payload. */
function message(code: string, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(5);
  header.write(code, 0, 'latin1');
  header.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** What the backend sends for COPY TO STDOUT of `rows`, then what follows it (CommandComplete, ReadyForQuery). */
const AFTER = Buffer.concat([message('C', 'COPY 6\0'), message('Z', 'I')]);
const copyOut = (rows: string[]) =>
  Buffer.concat([
    message('H', Buffer.from([0, 0, 11, ...Array<number>(22).fill(0)])),
    message('N', 'a notice\0'),
    ...rows.map((row, i) =>
      i === 2 ? Buffer.concat([message('S', 'a\0b\0'), message('d', row)]) : message('d', row),
    ),
    message('c'),
    AFTER,
  ]);

/** Decodes `chunks` (copies: the decoder rewrites them) into the rows' bytes and what followed the COPY. */
function decode(
  chunks: Buffer[],
  delimiter: string,
  leadingTimestamp = false,
): { rows: string; rest: Buffer; done: boolean } {
  const decoder = new CopyOutCsvRows(Buffer.from(delimiter)[0], leadingTimestamp);
  const out: Buffer[] = [];
  const rest: Buffer[] = [];
  let done: boolean | undefined;
  for (const chunk of chunks) {
    if (done !== undefined) {
      rest.push(chunk);
      continue;
    }
    const decoded = decoder.decode(Buffer.from(chunk));
    out.push(...decoded.rows.map(rows => Buffer.from(rows)));
    if (decoded.rest !== undefined) {
      done = decoded.done;
      rest.push(Buffer.from(decoded.rest));
    }
  }
  return { rows: Buffer.concat(out).toString('utf8'), rest: Buffer.concat(rest), done: done ?? false };
}

describe('COPY row ends -> CRLF (CopyOutCsvRows)', () => {
  for (const delimiter of [',', ';'])
    it(`When COPY's messages arrive split at any point (delimiter ${delimiter}), then the rows end in CRLF, no cell changes and pg gets what follows CopyDone`, () => {
      const input = copyOut(copyRows(delimiter));
      const expected = { rows: writerRows(delimiter), rest: AFTER, done: true };
      expect(decode([input], delimiter)).to.deep.equal(expected);
      for (let at = 0; at <= input.length; at++)
        expect(
          decode([input.subarray(0, at), input.subarray(at)], delimiter),
          `split at ${at}`,
        ).to.deep.equal(expected);
      const bytes = Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
      expect(decode(bytes, delimiter), 'one byte at a time').to.deep.equal(expected);
    });

  it('When each row starts with a timestamp text (ISO, UTC), split at any point, then it is written as ISO-8601 with milliseconds', () => {
    const cells: [string, string][] = [
      ['2026-11-22 10:30:00+00', '2026-11-22T10:30:00.000Z'],
      ['2026-11-22 10:30:00.1+00', '2026-11-22T10:30:00.100Z'],
      ['2026-11-22 10:30:00.12+00', '2026-11-22T10:30:00.120Z'],
      ['2026-11-22 10:30:00.123+00', '2026-11-22T10:30:00.123Z'],
      ['2026-11-22 10:30:00.1239+00', '2026-11-22T10:30:00.123Z'],
      ['2026-11-22 10:30:00.00099+00', '2026-11-22T10:30:00.000Z'],
      ['0999-01-02 03:04:05.999999+00', '0999-01-02T03:04:05.999Z'],
      // Years outside 1-9999: already isoSql's text (to_char), kept.
      ['10000-01-01T00:00:00.500Z', '10000-01-01T00:00:00.500Z'],
    ];
    for (const delimiter of [',', ';']) {
      const input = copyOut(
        cells.map(([cell], i) => `${cell}${delimiter}"x${delimiter}\n${i}"${delimiter}\n`),
      );
      const expected = {
        rows: cells.map(([, iso], i) => `${iso}${delimiter}"x${delimiter}\n${i}"\r\n`).join(''),
        rest: AFTER,
        done: true,
      };
      expect(decode([input], delimiter, true)).to.deep.equal(expected);
      for (let at = 0; at <= input.length; at++)
        expect(
          decode([input.subarray(0, at), input.subarray(at)], delimiter, true),
          `split at ${at}`,
        ).to.deep.equal(expected);
      const bytes = Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
      expect(decode(bytes, delimiter, true), 'one byte at a time').to.deep.equal(expected);
    }
  });

  it('When a leading cell is not a timestamp text in ISO style and UTC, then decoding fails', () => {
    for (const cell of [
      '2026-11-22 10:30:00.123+01',
      '2026-11-22T10:30:00.123',
      'plain',
      '2026-11-22 10:30:00.12345678+00',
    ])
      for (const chunks of [
        [message('d', `${cell},x,\n`)],
        [message('d', `${cell},x,\n`).subarray(0, 4), message('d', `${cell},x,\n`).subarray(4)],
      ])
        expect(() => decode(chunks, ',', true), cell).to.throw('leading timestamp');
  });

  it('When COPY sends no rows, then nothing is written and pg gets what follows CopyDone', () => {
    expect(decode([copyOut([])], ',')).to.deep.equal({ rows: '', rest: AFTER, done: true });
  });

  it('When the backend reports an error after some rows, then the rows before it are written and pg gets the error from its first byte', () => {
    const error = Buffer.concat([message('E', 'SERROR\0Mboom\0\0'), message('Z', 'I')]);
    const input = Buffer.concat([message('H', Buffer.from([0, 0, 0])), message('d', 'a,b,\n'), error]);
    for (let at = 0; at <= input.length; at++)
      expect(decode([input.subarray(0, at), input.subarray(at)], ','), `split at ${at}`).to.deep.equal({
        rows: 'a,b\r\n',
        rest: error,
        done: false,
      });
  });

  it('When a row does not end with the empty last column, or another message comes, then decoding fails', () => {
    expect(() => decode([message('d', 'a,b\n')], ',')).to.throw('empty last column');
    expect(() => decode([message('d', 'a,b,x')], ',')).to.throw('LF');
    expect(() => decode([message('d', '\n')], ',')).to.throw('empty last column');
    expect(() => decode([message('D', 'row')], ',')).to.throw('unexpected message D');
  });
});
