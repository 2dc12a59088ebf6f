import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { apiClient, startTestApp } from '../support/test-app.js';

describe('OpenAPI document', () => {
  it('When fetched, then it is an OpenAPI 3.1 document covering every mounted route', async () => {
    const res = await api().get('/api/openapi.json').expect(200);
    expect(res.body.openapi).to.equal('3.1.0');
    expect(res.body).to.deep.equal(testApp().openapi);
    const documented = new Set(
      Object.entries<Record<string, unknown>>(res.body.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map(method => `${method} ${path}`),
      ),
    );
    expect(documented.has('get /api/health')).to.equal(true);
    expect(documented.has('post /api/auth/login')).to.equal(true);
  });

  it('When the schemas are compiled, then every response schema is valid JSON Schema', () => {
    const doc = testApp().openapi;
    let count = 0;
    for (const ops of Object.values<Record<string, any>>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        expect(op.operationId).to.be.a('string');
        for (const response of Object.values<any>(op.responses)) {
          const schema = response.content?.['application/json']?.schema;
          if (schema) {
            expect(schema).to.be.an('object');
            count += 1;
          }
        }
      }
    }
    expect(count).to.be.greaterThan(3);
  });

  it('When the Swagger UI is opened, then it is served', async () => {
    const res = await api().get('/api/docs/').expect(200);
    expect(res.text).to.contain('swagger');
  });

  it('When metrics are scraped, then process metrics and request durations by route are exposed', async () => {
    await api().get('/api/health').expect(200);
    const res = await api().get('/metrics').expect(200);
    expect(res.text).to.contain('process_cpu_user_seconds_total');
    expect(res.text).to.match(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/health",status_code="200"\}/,
    );
  });

  it('When METRICS_TOKEN is set, then /metrics answers only that bearer token, 401 otherwise', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const app = await startTestApp({ METRICS_TOKEN: token }, { migrate: false });
    try {
      const client = apiClient(app);
      for (const header of [undefined, 'Bearer wrong-token', `Bearer ${token}x`, token]) {
        const call = client.get('/metrics');
        const res = await (header ? call.set('Authorization', header) : call).expect(401);
        expect(res.body).to.include({ status: 401, path: '/metrics' });
        expect(res.text).not.to.contain('process_cpu_user_seconds_total');
      }
      const res = await client.get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
      expect(res.text).to.contain('process_cpu_user_seconds_total');
    } finally {
      await app.close();
    }
  });
});
