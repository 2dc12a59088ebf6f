import type { Router } from 'express';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { QueueProducer } from '../domain/queues/queue-producer.js';

import { QUEUE_DASHBOARD_PATH } from './queue-dashboard-path.js';

/** bull-board over every queue of the system (mounted behind the ADMIN check in app.ts). */
export function queueDashboard(queues: QueueProducer): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  // @bull-board/express 9.10.1 pins its own copy of @bull-board/api (9.10.2 here): same shape, separate types.
  type ServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];
  createBullBoard({
    queues: queues.allQueues().map(q => new BullMQAdapter(q)),
    serverAdapter: serverAdapter as unknown as ServerAdapter,
  });
  return serverAdapter.getRouter() as Router;
}
