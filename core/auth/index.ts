/** STUB (being replaced): authentication and authorisation (API.md §2.3). */
import fp from 'fastify-plugin';

export default fp(async (app) => {
  app.decorateRequest('principal', null);
}, { name: 'auth' });
