/** COPY's binary header: signature, flags and the length of a header extension. */
export const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER = COPY_SIGNATURE.length + 8;

/** A big-endian int8 of binary COPY as a number (exact up to 2^53). */
export const readInt8 = (bytes: Buffer, offset: number): number =>
  bytes.readInt32BE(offset) * 0x1_0000_0000 + bytes.readUInt32BE(offset + 4);

/**
 * Reads `COPY … TO STDOUT (FORMAT binary)` streams one after another (a scan's batches): `read` checks and skips
 * a stream's header (`what` names the reader in the error when it is not binary COPY) and hands the bytes to
 * `decode(bytes, at)`, which decodes the whole rows from `at` on and returns where it stopped: at the first row
 * the bytes do not hold whole, at the trailer (a field count of -1) or at the end. A cut row is kept and joined
 * with the next piece in one buffer kept across pieces and streams (a new buffer per piece was garbage outside
 * the heap that piled up until a full collection). `afterPiece()` runs after each piece; a promise it returns
 * is waited for before the next one.
 */
export class BinaryCopyReader {
  private joined = Buffer.allocUnsafe(256 * 1024);

  constructor(private readonly what: string) {}

  async read(
    stream: AsyncIterable<Buffer>,
    decode: (bytes: Buffer, at: number) => number,
    afterPiece?: () => Promise<void> | undefined,
  ): Promise<void> {
    let headerSeen = false;
    let carry: Buffer | null = null;
    for await (const piece of stream) {
      let bytes: Buffer = piece;
      if (carry) {
        const length = carry.length + piece.length;
        let joined = this.joined;
        if (joined.length < length)
          joined = this.joined = Buffer.allocUnsafe(Math.max(length, 2 * joined.length));
        if (carry.buffer === joined.buffer)
          joined.copyWithin(
            0,
            carry.byteOffset - joined.byteOffset,
            carry.byteOffset - joined.byteOffset + carry.length,
          );
        else carry.copy(joined, 0);
        piece.copy(joined, carry.length);
        bytes = joined.subarray(0, length);
      }
      let at = 0;
      if (!headerSeen) {
        if (bytes.length < HEADER) {
          carry = bytes;
          continue;
        }
        if (!bytes.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE))
          throw new Error(`${this.what}: not a binary COPY`);
        at = HEADER + bytes.readInt32BE(COPY_SIGNATURE.length + 4);
        headerSeen = true;
      }
      at = decode(bytes, at);
      const trailer = at + 2 <= bytes.length && bytes.readInt16BE(at) === -1;
      carry = at < bytes.length && !trailer ? bytes.subarray(at) : null;
      const wait = afterPiece?.();
      if (wait) await wait;
    }
  }
}
