/** Where bull-board is mounted (behind the ADMIN check); its modules load on the first request there. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';
