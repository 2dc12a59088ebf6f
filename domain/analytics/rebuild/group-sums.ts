const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Exact sums of integers per group and field: numbers while they are safe integers, bigints beyond. Groups are
 * numbered by their key (any number) in the order first seen; `keys[group]` gives it back.
 */
export class GroupSums {
  private readonly groups = new Map<number, number>();
  readonly keys: number[] = [];
  private sums: Float64Array;
  private readonly big = new Map<number, bigint>();

  constructor(private readonly fields: number) {
    this.sums = new Float64Array(fields * 256);
  }

  get size(): number {
    return this.keys.length;
  }

  /** The group of `key`, added (with zero sums) when new. */
  group(key: number): number {
    let group = this.groups.get(key);
    if (group === undefined) {
      group = this.keys.length;
      this.keys.push(key);
      this.groups.set(key, group);
      if ((group + 1) * this.fields > this.sums.length) {
        const sums = new Float64Array(this.sums.length * 2);
        sums.set(this.sums);
        this.sums = sums;
      }
    }
    return group;
  }

  add(group: number, field: number, value: number | bigint): void {
    const at = group * this.fields + field;
    const held = this.sums[at];
    if (typeof value === 'number') {
      const sum = held + value;
      // NaN (a bigint held) fails both tests.
      if (sum <= SAFE && sum >= -SAFE) {
        this.sums[at] = sum;
        return;
      }
    }
    const sum = (held === held ? BigInt(held) : this.big.get(at)!) + BigInt(value);
    if (sum <= BigInt(SAFE) && sum >= -BigInt(SAFE)) {
      this.sums[at] = Number(sum);
      this.big.delete(at);
    } else {
      this.sums[at] = NaN;
      this.big.set(at, sum);
    }
  }

  get(group: number, field: number): number | bigint {
    const at = group * this.fields + field;
    const sum = this.sums[at];
    return sum === sum ? sum : this.big.get(at)!;
  }
}
