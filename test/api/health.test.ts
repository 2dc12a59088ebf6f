import { freePort } from '../support/ports.js';
import { expect } from 'chai';
import { api, testApp } from '../setup/hooks.js';
import { apiClient, startTestApp, type TestApp } from '../support/test-app.js';
import { TEST_DATABASE_URL } from '../support/test-env.js';

describe('Health', () => {
  it('When the liveness check is called, then it answers without authentication', async () => {
    const res = await api().get('/api/health').expect(200);
    expect(res.body).to.include({ status: 'ok', databaseProduct: 'PostgreSQL' });
    expect(['ok', 'unknown']).to.include(res.body.database);
    expect(res.body.timestamp).to.be.closeTo(Date.now(), 10000);
  });

  it('When the database is reachable, then the deep check is UP and names the client address', async () => {
    const res = await api().get('/api/health/db').expect(200);
    expect(res.body.status).to.equal('UP');
    expect(res.body.databaseSeesIp).to.be.a('string').and.not.equal('');
  });

  it('When the product health check runs, then UP/UP', async () => {
    const res = await api().get('/health').expect(200);
    expect(res.body).to.deep.equal({ status: 'UP', db: 'UP' });
  });

  it('When the probe has run, then liveness reports the database as ok', async () => {
    await testApp().services.probe.check();
    testApp().services.probe.start();
    const deadline = Date.now() + 5000;
    let state = testApp().services.probe.state;
    while (state !== 'ok' && Date.now() < deadline) {
      await new Promise(resolve => setImmediate(resolve));
      state = testApp().services.probe.state;
    }
    testApp().services.probe.stop();
    expect(state).to.equal('ok');
  });

  describe('with the database unreachable (a second app pointed at a closed port)', () => {
    let down: TestApp;
    before(async () => {
      const url = new URL(TEST_DATABASE_URL);
      url.port = String(await freePort());
      down = await startTestApp({ DATABASE_URL: url.toString() }, { migrate: false });
    });
    after(async () => down.close());

    it('When the deep check runs, then 503 DOWN within 3 s and the process keeps serving', async () => {
      const started = Date.now();
      const res = await apiClient(down).get('/api/health/db').expect(503);
      expect(Date.now() - started).to.be.below(3500);
      expect(res.body).to.deep.equal({ status: 'DOWN' });
      await apiClient(down).get('/api/health').expect(200);
    });

    it('When the product health check runs, then 500 DOWN/DOWN within 3 s', async () => {
      const started = Date.now();
      const res = await apiClient(down).get('/health').expect(500);
      expect(Date.now() - started).to.be.below(3500);
      expect(res.body).to.deep.equal({ status: 'DOWN', db: 'DOWN' });
    });

    it('When a request needs the database, then 503 in the documented shape, never 500', async () => {
      const res = await apiClient(down)
        .post('/api/auth/login')
        .send({ username: 'a', password: 'b' })
        .expect(503);
      expect(res.body).to.include({ error: 'service_unavailable', status: 503 });
    });
  });
});
