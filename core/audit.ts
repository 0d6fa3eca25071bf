/** STUB (being replaced): audit log of write requests (API.md §2.11). */
import fp from 'fastify-plugin';

export default fp(async () => {}, { name: 'audit', dependencies: ['auth'] });
