import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { api, testApp } from '../setup/hooks.js';
import { errorHandler } from '../../api/middleware/error-handler.js';
import { correlationId } from '../../api/middleware/correlation-id.js';
import { language } from '../../api/middleware/language.js';
import { PagingError } from '../../domain/shared/errors.js';
import { createLogger } from '../../config/logger.js';

const CORRELATION = /^SR-\d{13}-\d{4}$/;

describe('Error bodies', () => {
  it('When a route does not exist, then 404 comes in the central shape with the correlation id', async () => {
    const res = await api().get('/api/no-such-thing').expect(404);
    expect(res.body).to.include({ error: 'not_found', status: 404, path: '/api/no-such-thing' });
    expect(res.body.correlationId).to.match(CORRELATION);
    expect(res.headers['x-correlation-id']).to.equal(res.body.correlationId);
    expect(new Date(res.body.timestamp).toISOString()).to.equal(res.body.timestamp);
  });

  it('When a caller sends a safe X-Correlation-Id, then it is echoed in the header and the body', async () => {
    const res = await api().get('/api/nowhere').set('X-Correlation-Id', 'client-42.a_b').expect(404);
    expect(res.headers['x-correlation-id']).to.equal('client-42.a_b');
    expect(res.body.correlationId).to.equal('client-42.a_b');
  });

  it('When a caller sends an unsafe X-Correlation-Id, then a fresh one is generated', async () => {
    const res = await api()
      .get('/api/nowhere')
      .set('X-Correlation-Id', `x${'y'.repeat(80)}`)
      .expect(404);
    expect(res.headers['x-correlation-id']).to.match(CORRELATION);
  });

  it('When no authentication is provided, then 401 carries the localized message', async () => {
    const res = await api().get('/api/me').expect(401);
    expect(res.body).to.include({
      error: 'unauthorized',
      status: 401,
      message: 'No authentication provided',
    });
    expect(res.body.path).to.equal('/api/me');
  });

  it('When the JSON body is malformed, then 400 and nothing else happens', async () => {
    const res = await api()
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .send('{"username": "a", ')
      .expect(400);
    expect(res.body.message).to.equal('The request body is not valid JSON');
  });

  it('When the body is larger than 1 MB, then 413 in the error shape', async () => {
    const res = await api()
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ username: 'a', password: 'x'.repeat(1_100_000) }))
      .expect(413);
    expect(res.body).to.include({ error: 'payload_too_large', status: 413 });
  });

  it('When validation fails on a product-style route, then the envelope lists every field', async () => {
    const res = await api().post('/api/auth/login').send({ username: '  ', password: '' }).expect(400);
    expect(res.body).to.include({
      success: false,
      error: 'VALIDATION_ERROR',
      status: 400,
      data: res.body.data,
    });
    expect(res.body.details.map((d: { field: string }) => d.field)).to.deep.equal(['username', 'password']);
    expect(res.body.data).to.deep.equal({
      username: 'Username is required',
      password: 'Password is required',
    });
  });

  describe('raised by the error middleware itself', () => {
    const build = () => {
      const app = express();
      const log = createLogger('silent');
      app.use(correlationId);
      app.use((req, _res, next) => {
        req.log = log;
        next();
      });
      app.use(language(testApp().services.i18n));
      app.get('/boom', () => {
        throw new Error('select * from secret_table where password = 1');
      });
      app.get('/paging', () => {
        throw new PagingError('error.paging.size', { min: 1, max: 200 });
      });
      app.use(errorHandler);
      return app;
    };

    it('When something unexpected throws, then 500 with the generic message and nothing internal', async () => {
      const res = await request(build()).get('/boom?lang=de').expect(500);
      expect(res.body).to.include({ error: 'internal_server_error', status: 500 });
      expect(res.body.message).to.equal('Ein unerwarteter Fehler ist aufgetreten');
      expect(JSON.stringify(res.body)).not.to.match(/secret_table|select|stack|\.ts/);
    });

    it('When page bounds are violated, then the paging body has exactly four fields', async () => {
      const res = await request(build()).get('/paging').expect(400);
      expect(Object.keys(res.body).sort()).to.deep.equal(['correlationId', 'error', 'message', 'timestamp']);
      expect(res.body).to.include({ error: 'bad_request', message: 'page size must be between 1 and 200' });
      expect(res.body.correlationId).to.match(CORRELATION);
    });
  });
});

describe('Database input errors', () => {
  it('When text with a NUL byte reaches the database, then 400 and not 500', async () => {
    const body = await api()
      .post('/api/auth/login')
      .send({ username: 'nul\u0000user', password: 'x' })
      .expect(400);
    expect(body.body.message).to.equal('Text must not contain NUL characters.');
    const query = await api().get('/api/me?lang=de%00').expect(400);
    expect(query.body.fieldErrors).to.have.property('lang');
  });
});
