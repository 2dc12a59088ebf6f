import { expect } from 'chai';
import { orderByClause, parsePageRequest, searchPage, springPage } from '../../domain/shared/paging.js';
import { PagingError, ValidationError } from '../../domain/shared/errors.js';

const rules = {
  maxSize: 200,
  defaultSize: 20,
  sortable: { name: 'i.name', price: 'i.price', createdAt: 'i.created_at' },
  defaultSort: [{ property: 'name', direction: 'ASC' as const }],
};

describe('Paging and sorting', () => {
  it('When nothing is given, then page 0, the default size and the default sort', () => {
    expect(parsePageRequest({}, rules)).to.deep.equal({ page: 0, size: 20, sort: rules.defaultSort });
  });

  it('When size is outside its bounds, then a paging error naming the bounds', () => {
    for (const size of [0, -1, 201, 1e12]) {
      expect(() => parsePageRequest({ size }, rules)).to.throw(PagingError);
    }
    try {
      parsePageRequest({ size: 101 }, { ...rules, maxSize: 100 });
    } catch (e) {
      expect((e as PagingError).params).to.deep.equal({ min: 1, max: 100 });
    }
  });

  it('When page is negative, then a paging error', () => {
    expect(() => parsePageRequest({ page: -1 }, rules)).to.throw(PagingError);
  });

  it('When several sorts are given, then they apply in order; unknown properties and directions are 400', () => {
    const request = parsePageRequest({ sort: ['price,desc', 'name'] }, rules);
    expect(request.sort).to.deep.equal([
      { property: 'price', direction: 'DESC' },
      { property: 'name', direction: 'ASC' },
    ]);
    expect(orderByClause(request.sort, rules, 'i.id')).to.equal('i.price DESC, i.name ASC, i.id ASC');
    for (const bad of [
      'password',
      'name;drop table item',
      '__proto__',
      'constructor',
      'name,sideways',
      'name,asc,x',
    ]) {
      expect(() => parsePageRequest({ sort: bad }, rules), bad).to.throw(ValidationError);
    }
    expect(() => parsePageRequest({ sort: Array(11).fill('name') }, rules)).to.throw(ValidationError);
  });

  it('When a page past the end is built, then it is empty with unchanged totals', () => {
    const page = springPage([], { page: 5, size: 10, sort: [] }, 23);
    expect(page).to.include({
      totalElements: 23,
      totalPages: 3,
      empty: true,
      numberOfElements: 0,
      first: false,
      last: true,
    });
    const search = searchPage(['a'], { page: 0, size: 10, sort: [] }, 23);
    expect(search.page).to.deep.equal({ size: 10, number: 0, totalElements: 23, totalPages: 3 });
    expect(search).to.include({ first: true, last: false });
  });
});
