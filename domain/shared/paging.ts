import { PagingError, ValidationError } from './errors.js';

export type SortDirection = 'ASC' | 'DESC';
export interface SortOrder {
  property: string;
  direction: SortDirection;
}

export interface PageRequest {
  page: number;
  size: number;
  sort: SortOrder[];
}

export interface PageRules {
  /** Inclusive bounds and default of `size`. */
  minSize?: number;
  maxSize: number;
  defaultSize: number;
  /** API property -> SQL expression. Only these may be sorted on. */
  sortable: Record<string, string>;
  defaultSort: SortOrder[];
}

/**
 * Parses `page`, `size` and repeated `sort=property,direction` (already type-checked by joi) against an
 * endpoint's rules. Size outside its bounds -> paging error body; unknown sort property or direction -> 400.
 */
export function parsePageRequest(
  query: { page?: number; size?: number; sort?: string | string[] },
  rules: PageRules,
): PageRequest {
  const minSize = rules.minSize ?? 1;
  const page = query.page ?? 0;
  const size = query.size ?? rules.defaultSize;
  if (!Number.isSafeInteger(page) || page < 0) throw new PagingError('error.paging.page', {});
  if (!Number.isSafeInteger(size) || size < minSize || size > rules.maxSize)
    throw new PagingError('error.paging.size', { min: minSize, max: rules.maxSize });
  if (page > 1_000_000_000) throw new PagingError('error.paging.page', {});
  return { page, size, sort: parseSort(query.sort, rules) };
}

export function parseSort(
  raw: string | string[] | undefined,
  rules: Pick<PageRules, 'sortable' | 'defaultSort'>,
) {
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter(v => v !== '');
  if (values.length > 10) throw new ValidationError('error.sort.too.many');
  const orders: SortOrder[] = [];
  for (const value of values) {
    const [property, direction = 'asc', ...rest] = value.split(',').map(s => s.trim());
    if (rest.length > 0 || !Object.hasOwn(rules.sortable, property))
      throw new ValidationError('error.sort.property', { params: { property: property.slice(0, 50) } });
    const dir = direction.toLowerCase();
    if (dir !== 'asc' && dir !== 'desc')
      throw new ValidationError('error.sort.direction', { params: { direction: direction.slice(0, 10) } });
    orders.push({ property, direction: dir === 'asc' ? 'ASC' : 'DESC' });
  }
  return orders.length > 0 ? orders : rules.defaultSort;
}

/** ORDER BY clause built only from whitelisted expressions, with a tiebreaker for stable paging. */
export function orderByClause(
  sort: SortOrder[],
  rules: Pick<PageRules, 'sortable'>,
  tiebreaker: string,
): string {
  const parts = sort.map(o => `${rules.sortable[o.property]} ${o.direction}`);
  parts.push(`${tiebreaker} ASC`);
  return parts.join(', ');
}

export interface SpringPage<T> {
  content: T[];
  pageable: { pageNumber: number; pageSize: number; sort: { property: string; direction: SortDirection }[] };
  totalElements: number;
  totalPages: number;
  last: boolean;
  first: boolean;
  number: number;
  size: number;
  numberOfElements: number;
  empty: boolean;
}

export interface SearchPage<T> extends SpringPage<T> {
  page: { size: number; number: number; totalElements: number; totalPages: number };
}

/** Spring Data style page. A page past the end is empty with unchanged totals. */
export function springPage<T>(content: T[], request: PageRequest, totalElements: number): SpringPage<T> {
  const totalPages = Math.ceil(totalElements / request.size);
  return {
    content,
    pageable: { pageNumber: request.page, pageSize: request.size, sort: request.sort },
    totalElements,
    totalPages,
    last: request.page >= totalPages - 1,
    first: request.page === 0,
    number: request.page,
    size: request.size,
    numberOfElements: content.length,
    empty: content.length === 0,
  };
}

/** The search page of the item search and the history search: the Spring page plus `page: {size, number, totalElements, totalPages}`. */
export function searchPage<T>(content: T[], request: PageRequest, totalElements: number): SearchPage<T> {
  const spring = springPage(content, request, totalElements);
  return {
    ...spring,
    page: { size: request.size, number: request.page, totalElements, totalPages: spring.totalPages },
  };
}
