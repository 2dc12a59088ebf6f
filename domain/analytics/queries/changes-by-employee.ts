import type { EntityManager } from '@mikro-orm/postgresql';

export type Granularity = 'daily' | 'weekly' | 'monthly';

export interface EmployeeActivity {
  period: string;
  createdBy: string;
  displayName: string;
  changeCount: number;
}

/** daily `yyyy-MM-dd`, weekly: the ISO week's Monday `yyyy-MM-dd`, monthly `yyyy-MM`. */
const PERIOD: Record<Granularity, string> = {
  daily: `to_char(day, 'YYYY-MM-DD')`,
  weekly: `to_char(date_trunc('week', day), 'YYYY-MM-DD')`,
  monthly: `to_char(day, 'YYYY-MM')`,
};

/** Changes by employee: history entries per period and user (display name from the user account when it exists). */
export async function changesByEmployee(
  em: EntityManager,
  granularity: Granularity,
  range: { start: string; end: string },
  supplierId: string | null,
): Promise<EmployeeActivity[]> {
  const rows = await em.execute<any[]>(
    `with counts as (
       select ${PERIOD[granularity]} as period, created_by, sum(entries) as n
       from analytics_user_day
       where day between ?::date and ?::date and (?::uuid is null or supplier_key = ?::uuid)
       group by 1, 2)
     select c.period, c.created_by, c.n,
            coalesce((select u.full_name from app_user u
                      where lower(u.username) = lower(c.created_by) or lower(u.email) = lower(c.created_by)
                      order by u.id limit 1), c.created_by) as display_name
     from counts c order by c.period, c.n desc, c.created_by collate "C"`,
    [range.start, range.end, supplierId, supplierId],
  );
  return rows.map(r => ({
    period: r.period,
    createdBy: r.created_by,
    displayName: r.display_name ?? r.created_by,
    changeCount: Number(r.n),
  }));
}
