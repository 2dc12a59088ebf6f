import { expect } from 'chai';
import { CopyOutCsvRows } from '../../domain/shared/csv-copy-out.js';
import type { CsvCopyKind } from '../../domain/shared/csv-copy.js';

/** Rows as COPY writes them (two columns, LF row ends). */
const copyRows = (d: string) => [
  `a${d}b\n`,
  `"x${d}""\n"${d}y\n`,
  `"${d}"${d}"\n${d}\n"\n`,
  `${d}\n`,
  `"""quoted"""${d}"line\r\nend"\n`,
  `last${d}"${d}\n${d}"\n`,
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
  kinds: CsvCopyKind[],
): { rows: string; rest: Buffer; done: boolean } {
  const decoder = new CopyOutCsvRows(Buffer.from(delimiter)[0], kinds);
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

/** Decodes the COPY of `rows` whole, split at every byte, and one byte at a time: always `expected`. */
function expectEverySplit(rows: string[], delimiter: string, kinds: CsvCopyKind[], expected: string): void {
  const input = copyOut(rows);
  const result = { rows: expected, rest: AFTER, done: true };
  expect(decode([input], delimiter, kinds)).to.deep.equal(result);
  for (let at = 0; at <= input.length; at++)
    expect(
      decode([input.subarray(0, at), input.subarray(at)], delimiter, kinds),
      `split at ${at}`,
    ).to.deep.equal(result);
  const bytes = Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
  expect(decode(bytes, delimiter, kinds), 'one byte at a time').to.deep.equal(result);
}

describe('COPY rows -> the export rows (CopyOutCsvRows)', () => {
  for (const delimiter of [',', ';'])
    it(`When COPY's messages arrive split at any point (delimiter ${delimiter}), then the rows end in CRLF, quoted cells are kept whole and pg gets what follows CopyDone`, () => {
      expectEverySplit(copyRows(delimiter), delimiter, ['plain', 'plain'], writerRows(delimiter));
      expectEverySplit(copyRows(delimiter), delimiter, ['text', 'text'], writerRows(delimiter));
    });

  it('When a column holds timestamps (their text in ISO style and UTC), then each is written as ISO-8601 with milliseconds, as to_char wrote it', () => {
    const cells: [string, string][] = [
      ['2026-11-22 10:30:00+00', '2026-11-22T10:30:00.000Z'],
      ['2026-11-22 10:30:00.1+00', '2026-11-22T10:30:00.100Z'],
      ['2026-11-22 10:30:00.12+00', '2026-11-22T10:30:00.120Z'],
      ['2026-11-22 10:30:00.123+00', '2026-11-22T10:30:00.123Z'],
      ['2026-11-22 10:30:00.1239+00', '2026-11-22T10:30:00.123Z'],
      ['2026-11-22 10:30:00.00099+00', '2026-11-22T10:30:00.000Z'],
      ['0999-01-02 03:04:05.999999+00', '0999-01-02T03:04:05.999Z'],
      ['10000-01-01 00:00:00.5+00', '10000-01-01T00:00:00.500Z'],
      ['0044-03-15 12:00:00+00 BC', '0044-03-15T12:00:00.000Z'],
      ['infinity', ''],
      ['-infinity', ''],
      ['', ''],
    ];
    for (const delimiter of [',', ';'])
      expectEverySplit(
        cells.map(([cell], i) => `${i}${delimiter}${cell}${delimiter}"x${delimiter}\n${i}"\n`),
        delimiter,
        ['plain', 'timestamp', 'plain'],
        cells.map(([, iso], i) => `${i}${delimiter}${iso}${delimiter}"x${delimiter}\n${i}"\r\n`).join(''),
      );
  });

  it("When a column holds text, then a cell that starts like a formula gets neutraliseFormula's ' (inside its quotes), and an empty text (quoted by COPY) is left empty", () => {
    const cells: [string, string][] = [
      ['plain', 'plain'],
      ['""', ''],
      ['', ''],
      ['=SUM(A1)', "'=SUM(A1)"],
      ['"=cmd,x"', '"\'=cmd,x"'],
      ['+1', "'+1"],
      ['-1', "'-1"],
      ['@cmd', "'@cmd"],
      ['\tTab', "'\tTab"],
      ['"\rCR first"', '"\'\rCR first"'],
      ["'", "''"],
      ["'=already", "''=already"],
      ['"""="', '"""="'],
      ["it's", "it's"],
    ];
    expectEverySplit(
      cells.map(([cell], i) => `${cell},${i}\n`),
      ',',
      ['text', 'plain'],
      cells.map(([, out], i) => `${out},${i}\r\n`).join(''),
    );
    // A row that grows by more than its header (five prefixes and a timestamp) is written on its own.
    expectEverySplit(
      [
        '2026-01-01 00:00:00+00,=a,=b,=c,=d,=e\n',
        'x,y\n'.replace('x,y', '2026-01-01 00:00:00.123456+00,a,b,c,d,e'),
      ],
      ',',
      ['timestamp', 'text', 'text', 'text', 'text', 'text'],
      "2026-01-01T00:00:00.000Z,'=a,'=b,'=c,'=d,'=e\r\n2026-01-01T00:00:00.123Z,a,b,c,d,e\r\n",
    );
  });

  it('When a column holds decimals, then they are written without trailing zeros, as JSON numbers', () => {
    const cells: [string, string][] = [
      ['12.30', '12.3'],
      ['12.34', '12.34'],
      ['5.00', '5'],
      ['-5.50', '-5.5'],
      ['0.00', '0'],
      ['0.01', '0.01'],
      ['10.10', '10.1'],
      ['100', '100'],
      ['9999999999.99', '9999999999.99'],
      ['', ''],
    ];
    expectEverySplit(
      cells.map(([cell], i) => `${i};${cell}\n`),
      ';',
      ['plain', 'decimal'],
      cells.map(([, out], i) => `${i};${out}\r\n`).join(''),
    );
  });

  it('When COPY sends no rows, then nothing is written and pg gets what follows CopyDone', () => {
    expect(decode([copyOut([])], ',', ['plain'])).to.deep.equal({ rows: '', rest: AFTER, done: true });
  });

  it('When the backend reports an error after some rows, then the rows before it are written and pg gets the error from its first byte', () => {
    const error = Buffer.concat([message('E', 'SERROR\0Mboom\0\0'), message('Z', 'I')]);
    const input = Buffer.concat([message('H', Buffer.from([0, 0, 0])), message('d', 'a,b\n'), error]);
    for (let at = 0; at <= input.length; at++)
      expect(
        decode([input.subarray(0, at), input.subarray(at)], ',', ['plain', 'plain']),
        `split at ${at}`,
      ).to.deep.equal({
        rows: 'a,b\r\n',
        rest: error,
        done: false,
      });
  });

  it('When a row does not match the columns, a timestamp is not in ISO style and UTC, or another message comes, then decoding fails', () => {
    const fails = (row: string, kinds: CsvCopyKind[], error: string) => {
      for (const chunks of [
        [message('d', row)],
        [message('d', row).subarray(0, 7), message('d', row).subarray(7)],
      ])
        expect(() => decode(chunks, ',', kinds), row).to.throw(error);
    };
    fails('a,b\n', ['plain'], 'more cells');
    fails('a\n', ['plain', 'plain'], 'fewer cells');
    fails('a,b', ['plain', 'plain'], 'LF');
    fails('"a,b\n', ['plain'], 'unterminated');
    for (const cell of [
      '2026-11-22 10:30:00.123+01',
      '2026-11-22T10:30:00.123Z',
      '22.11.2026 10:30',
      '2026-11-22 10:30:00.1234567+00',
      '2026-11-22 10:30:00.+00',
    ])
      fails(`${cell},x\n`, ['timestamp', 'plain'], 'ISO style and UTC');
    expect(() => decode([message('D', 'row')], ',', ['plain'])).to.throw('unexpected message D');
  });
});
