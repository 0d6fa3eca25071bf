/** STUB (being replaced): CORS (API.md §2.11). */
import fp from 'fastify-plugin';

export default fp(async () => {}, { name: 'cors' });
