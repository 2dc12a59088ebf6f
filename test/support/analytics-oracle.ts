import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The test oracle: every analytics answer computed straight from the raw stock history (and, for the
 * current-state endpoints, the item rows) with plain loops and bigint arithmetic — no rollup, no shared code
 * with the implementation. Per item, events are in outbox-event order; days are UTC.
 */
export interface Entry {
  /** The history entry's id, and the id of the entry it reverses (a reversal). */
  id?: string;
  reversalOf?: string | null;
  eventId: bigint;
  itemId: string;
  itemName: string;
  supplierId: string | null;
  supplierName: string | null;
  change: number;
  quantityAfter: number;
  reason: string;
  /** cents */
  price: bigint;
  /** 1e-4 units: what stock in cost when it is not the price (a receipt's line cost); null otherwise. */
  unitCost?: bigint | null;
  createdBy: string;
  timestamp: string;
  micros: bigint;
  day: string;
}

export interface ItemRow {
  id: string;
  name: string;
  quantity: number;
  /** cents */
  price: bigint;
  minimumQuantity: number;
  supplierId: string;
  supplierName: string;
}

const cents = (text: string): bigint => {
  const [w, f = ''] = text.split('.');
  return BigInt(w) * 100n + BigInt((f + '00').slice(0, 2));
};
/** half away from zero */
const div = (n: bigint, d: bigint): bigint => {
  const neg = n < 0n !== d < 0n;
  const a = n < 0n ? -n : n;
  const b = d < 0n ? -d : d;
  const q = (2n * a + b) / (2n * b);
  return neg ? -q : q;
};
const money2 = (c: bigint) => Number(c) / 100;
/** 1e-4 units -> cents, half-up */
const money4 = (u: bigint) => Number(div(u, 100n)) / 100;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const days = (start: string, end: string) => {
  const out: string[] = [];
  for (let t = Date.parse(`${start}T00:00:00Z`); t <= Date.parse(`${end}T00:00:00Z`); t += 86400000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
};
const matches = (supplierId: string | null | undefined, e: { supplierId: string | null }) =>
  !supplierId || e.supplierId === supplierId;
const WRITE_OFF = new Set(['DAMAGED', 'DESTROYED', 'SCRAPPED', 'EXPIRED', 'LOST']);

export class AnalyticsOracle {
  readonly byItem = new Map<string, Entry[]>();

  constructor(
    readonly entries: Entry[],
    readonly items: ItemRow[],
    readonly users: { username: string; email: string | null; fullName: string | null }[],
  ) {
    for (const e of entries) {
      const list = this.byItem.get(e.itemId) ?? [];
      list.push(e);
      this.byItem.set(e.itemId, list);
    }
    for (const list of this.byItem.values()) list.sort((a, b) => (a.eventId < b.eventId ? -1 : 1));
  }

  static async load(em: EntityManager): Promise<AnalyticsOracle> {
    const rows = await em.execute<any[]>(
      `select id::text as id, reversal_of::text as reversal_of, outbox_event_id, item_id, item_name, supplier_id, supplier_name, change, quantity_after, reason,
              price_at_change::text as price, created_by,
              case when reversal_of is null then (unit_cost * 10000)::bigint::text end as unit_cost,
              to_char("timestamp" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ts,
              (extract(epoch from "timestamp") * 1000000)::bigint::text as micros
       from stock_history`,
    );
    const items = await em.execute<any[]>(
      `select i.id, i.name, i.quantity, i.price::text as price, i.minimum_quantity, s.id as sid, s.name as sname
       from inventory_item i join supplier s on s.id = i.supplier_id`,
    );
    const users = await em.execute<any[]>('select username, email, full_name from app_user');
    return new AnalyticsOracle(
      rows.map(r => ({
        id: r.id,
        reversalOf: r.reversal_of,
        eventId: BigInt(r.outbox_event_id),
        itemId: r.item_id,
        itemName: r.item_name,
        supplierId: r.supplier_id,
        supplierName: r.supplier_name,
        change: Number(r.change),
        quantityAfter: Number(r.quantity_after),
        reason: r.reason,
        price: cents(r.price),
        unitCost: r.unit_cost === null ? null : BigInt(r.unit_cost),
        createdBy: r.created_by,
        timestamp: r.ts,
        micros: BigInt(r.micros),
        day: r.ts.slice(0, 10),
      })),
      items.map(r => ({
        id: r.id,
        name: r.name,
        quantity: r.quantity,
        price: cents(r.price),
        minimumQuantity: r.minimum_quantity,
        supplierId: r.sid,
        supplierName: r.sname,
      })),
      users.map(u => ({ username: u.username, email: u.email, fullName: u.full_name })),
    );
  }

  /** The item's last entry with day <= `day` (or < when strict). */
  private lastBy(list: Entry[], day: string, strict: boolean): Entry | undefined {
    let last: Entry | undefined;
    for (const e of list) if (strict ? e.day < day : e.day <= day) last = e;
    return last;
  }

  stockValue(start: string, end: string, supplierId?: string) {
    return days(start, end).map(d => {
      let total = 0n;
      for (const list of this.byItem.values()) {
        const last = this.lastBy(list, d, false);
        if (last && matches(supplierId, last)) total += BigInt(last.quantityAfter) * last.price;
      }
      return { date: d, totalValue: money2(total) };
    });
  }

  stockPerSupplier(supplierId?: string) {
    const map = new Map<string, { supplierId: string; supplierName: string; q: number; v: bigint }>();
    for (const i of this.items) {
      if (supplierId && i.supplierId !== supplierId) continue;
      const s = map.get(i.supplierId) ?? {
        supplierId: i.supplierId,
        supplierName: i.supplierName,
        q: 0,
        v: 0n,
      };
      s.q += i.quantity;
      s.v += BigInt(i.quantity) * i.price;
      map.set(i.supplierId, s);
    }
    return [...map.values()]
      .sort((a, b) => b.q - a.q || cmp(a.supplierName, b.supplierName) || cmp(a.supplierId, b.supplierId))
      .map(s => ({
        supplierId: s.supplierId,
        supplierName: s.supplierName,
        totalQuantity: s.q,
        totalValue: money2(s.v),
      }));
  }

  lowStockCount() {
    return this.items.filter(i => i.quantity < i.minimumQuantity).length;
  }

  lowStockItems(supplierId?: string, limit?: number) {
    const list = this.items
      .filter(i => i.quantity < i.minimumQuantity && (!supplierId || i.supplierId === supplierId))
      .sort((a, b) => a.quantity - b.quantity || cmp(a.name, b.name) || cmp(a.id, b.id))
      .map(i => ({
        itemId: i.id,
        itemName: i.name,
        quantity: i.quantity,
        minimumQuantity: i.minimumQuantity,
        recommendedQuantity: Math.max(2 * i.minimumQuantity - i.quantity, i.minimumQuantity - i.quantity),
      }));
    return limit === undefined ? list : list.slice(0, limit);
  }

  updateFrequency(supplierId?: string, start?: string, end?: string, limit?: number) {
    const counts = new Map<string, { n: number; last: Entry }>();
    for (const list of this.byItem.values())
      for (const e of list) {
        if (!matches(supplierId, e) || (start && e.day < start) || (end && e.day > end)) continue;
        const c = counts.get(e.itemId) ?? { n: 0, last: e };
        c.n += 1;
        c.last = e;
        counts.set(e.itemId, c);
      }
    const list = [...counts.entries()]
      .map(([itemId, c]) => ({ itemId, itemName: c.last.itemName, updateCount: c.n }))
      .sort(
        (a, b) => b.updateCount - a.updateCount || cmp(a.itemName, b.itemName) || cmp(a.itemId, b.itemId),
      );
    return limit === undefined ? list : list.slice(0, limit);
  }

  monthlyMovement(start: string, end: string, supplierId?: string) {
    const months = new Map<string, { stockIn: number; stockOut: number }>();
    for (const e of this.entries) {
      if (e.day < start || e.day > end || !matches(supplierId, e)) continue;
      const m = months.get(e.day.slice(0, 7)) ?? { stockIn: 0, stockOut: 0 };
      if (e.change > 0) m.stockIn += e.change;
      else m.stockOut -= e.change;
      months.set(e.day.slice(0, 7), m);
    }
    return [...months.entries()].sort((a, b) => cmp(a[0], b[0])).map(([month, m]) => ({ month, ...m }));
  }

  stockUpdates(f: {
    from: Date;
    to: Date;
    toInclusive: boolean;
    itemName?: string;
    supplierId?: string;
    createdBy?: string;
    minChange?: number;
    maxChange?: number;
  }) {
    const fromMicros = BigInt(f.from.getTime()) * 1000n;
    const toMicros = BigInt(f.to.getTime()) * 1000n;
    return this.entries
      .filter(
        e =>
          e.micros >= fromMicros &&
          (f.toInclusive ? e.micros <= toMicros : e.micros < toMicros) &&
          (!f.itemName || e.itemName.toLowerCase().includes(f.itemName.toLowerCase())) &&
          matches(f.supplierId, e) &&
          (!f.createdBy || e.createdBy.toLowerCase() === f.createdBy.toLowerCase()) &&
          (f.minChange === undefined || e.change >= f.minChange) &&
          (f.maxChange === undefined || e.change <= f.maxChange),
      )
      .sort((a, b) =>
        a.micros !== b.micros ? (a.micros > b.micros ? -1 : 1) : a.eventId > b.eventId ? -1 : 1,
      )
      .slice(0, 1000)
      .map(e => ({
        itemId: e.itemId,
        itemName: e.itemName,
        supplierName: e.supplierName,
        change: e.change,
        reason: e.reason,
        createdBy: e.createdBy,
        timestamp: e.timestamp,
      }));
  }

  summary(start: string, end: string, supplierId?: string) {
    return {
      stockPerSupplier: this.stockPerSupplier(supplierId),
      lowStockItems: this.lowStockItems(supplierId, 5),
      monthlyStockMovement: this.monthlyMovement(start, end, supplierId),
      topUpdatedItems: this.updateFrequency(supplierId, start, end, 5),
    };
  }

  priceTrend(itemId: string, start: string, end: string, supplierId?: string) {
    const perDay = new Map<string, { sum: bigint; n: bigint }>();
    for (const e of this.byItem.get(itemId) ?? []) {
      if (e.day < start || e.day > end || !matches(supplierId, e)) continue;
      const p = perDay.get(e.day) ?? { sum: 0n, n: 0n };
      p.sum += e.price;
      p.n += 1n;
      perDay.set(e.day, p);
    }
    return [...perDay.entries()]
      .sort((a, b) => cmp(a[0], b[0]))
      .map(([day, p]) => ({ timestamp: day, price: money2(div(p.sum, p.n)) }));
  }

  financial(from: string, to: string, supplierId?: string) {
    // Unit costs and values in 1e-4 units; u (cents) -> 1e-4 units x100.
    let openingQty = 0;
    let openingValue = 0n;
    let endingQty = 0;
    let endingValue = 0n;
    const b = { pq: 0, pc: 0n, rq: 0, rc: 0n, cq: 0, cc: 0n, wq: 0, wc: 0n };
    for (const list of this.byItem.values()) {
      let q = 0;
      let c = 0n;
      let opening: { q: number; c: bigint; e: Entry } | undefined;
      let ending: { q: number; c: bigint; e: Entry } | undefined;
      // The unit cost each entry moved at (inbound: its own unit cost, else its price; outbound: the average
      // before it), by entry id.
      const movedAt = new Map<string, bigint>();
      for (const e of list) {
        const inWindow = e.day >= from && e.day <= to && matches(supplierId, e);
        const original = e.reversalOf ? movedAt.get(e.reversalOf) : undefined;
        const inAt = e.unitCost ?? e.price * 100n;
        if (e.id) movedAt.set(e.id, e.change > 0 ? inAt : c);
        if (original !== undefined && e.change > 0) {
          // Reversal of an outbound: back in at the cost it left with, its bucket undone.
          const n = BigInt(e.change);
          c = div(BigInt(q) * c + n * original, BigInt(q) + n);
          q += e.change;
          if (inWindow && e.reason === 'RETURNED_TO_SUPPLIER') {
            b.pq += e.change;
            b.pc += n * original;
          } else if (inWindow && WRITE_OFF.has(e.reason)) {
            b.wq -= e.change;
            b.wc -= n * original;
          } else if (inWindow) {
            b.cq -= e.change;
            b.cc -= n * original;
          }
        } else if (original !== undefined && e.change < 0) {
          // Reversal of an inbound: out at the price it came in at, the average as if it never came.
          const n = -e.change;
          const left = Math.max(0, q - n);
          const rest = BigInt(q) * c - BigInt(n) * original;
          c = left === 0 ? c : rest <= 0n ? 0n : div(rest, BigInt(left));
          q = left;
          if (inWindow && e.reason === 'RETURN') {
            b.rq -= n;
            b.rc -= BigInt(n) * original;
          } else if (inWindow) {
            b.pq -= n;
            b.pc -= BigInt(n) * original;
          }
        } else if (e.change > 0) {
          const n = BigInt(e.change);
          const u = inAt;
          c = div(BigInt(q) * c + n * u, BigInt(q) + n);
          q += e.change;
          if (inWindow && e.reason === 'RETURN') {
            b.rq += e.change;
            b.rc += n * u;
          } else if (inWindow) {
            b.pq += e.change;
            b.pc += n * u;
          }
        } else if (e.change < 0) {
          const n = -e.change;
          const cost = c * BigInt(n);
          q = Math.max(0, q - n);
          if (inWindow && e.reason === 'RETURNED_TO_SUPPLIER') {
            b.pq -= n;
            b.pc -= cost;
          } else if (inWindow && WRITE_OFF.has(e.reason)) {
            b.wq += n;
            b.wc += cost;
          } else if (inWindow) {
            b.cq += n;
            b.cc += cost;
          }
        }
        if (e.day < from) opening = { q, c, e };
        if (e.day <= to) ending = { q, c, e };
      }
      if (opening && matches(supplierId, opening.e)) {
        openingQty += opening.q;
        openingValue += BigInt(opening.q) * opening.c;
      }
      if (ending && matches(supplierId, ending.e)) {
        endingQty += ending.q;
        endingValue += BigInt(ending.q) * ending.c;
      }
    }
    const wac = endingQty === 0 ? 0n : div(endingValue, BigInt(endingQty));
    return {
      totalInventoryValue: money4(endingValue),
      totalQuantity: endingQty,
      weightedAverageCost: Number(wac) / 10000,
      totalCost: money4(b.pc),
      period: { from, to },
      method: 'WAC',
      fromDate: from,
      toDate: to,
      openingQty,
      openingValue: money4(openingValue),
      purchasesQty: b.pq,
      purchasesCost: money4(b.pc),
      returnsInQty: b.rq,
      returnsInCost: money4(b.rc),
      cogsQty: b.cq,
      cogsCost: money4(b.cc),
      writeOffQty: b.wq,
      writeOffCost: money4(b.wc),
      endingQty,
      endingValue: money4(endingValue),
    };
  }

  reasonBreakdown(start: string, end: string, supplierId?: string, itemName?: string) {
    const map = new Map<string, { increase: number; decrease: number }>();
    for (const e of this.entries) {
      if (e.day < start || e.day > end || !matches(supplierId, e)) continue;
      if (itemName && !e.itemName.toLowerCase().includes(itemName.toLowerCase())) continue;
      const r = map.get(e.reason) ?? { increase: 0, decrease: 0 };
      if (e.change > 0) r.increase += e.change;
      else r.decrease -= e.change;
      map.set(e.reason, r);
    }
    return [...map.entries()].sort((a, b) => cmp(a[0], b[0])).map(([reason, r]) => ({ reason, ...r }));
  }

  byEmployee(granularity: 'daily' | 'weekly' | 'monthly', start: string, end: string, supplierId?: string) {
    const period = (day: string) => {
      if (granularity === 'monthly') return day.slice(0, 7);
      if (granularity === 'daily') return day;
      const d = new Date(`${day}T00:00:00Z`);
      const back = (d.getUTCDay() + 6) % 7;
      return new Date(d.getTime() - back * 86400000).toISOString().slice(0, 10);
    };
    const map = new Map<string, { period: string; createdBy: string; n: number }>();
    for (const e of this.entries) {
      if (e.day < start || e.day > end || !matches(supplierId, e)) continue;
      const key = `${period(e.day)}|${e.createdBy}`;
      const v = map.get(key) ?? { period: period(e.day), createdBy: e.createdBy, n: 0 };
      v.n += 1;
      map.set(key, v);
    }
    const display = (who: string) =>
      this.users.find(
        u =>
          u.username.toLowerCase() === who.toLowerCase() ||
          (u.email ?? '').toLowerCase() === who.toLowerCase(),
      )?.fullName ?? who;
    return [...map.values()]
      .sort((a, b) => cmp(a.period, b.period) || b.n - a.n || cmp(a.createdBy, b.createdBy))
      .map(v => ({
        period: v.period,
        createdBy: v.createdBy,
        displayName: display(v.createdBy),
        changeCount: v.n,
      }));
  }
}
