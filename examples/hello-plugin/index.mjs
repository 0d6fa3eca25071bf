/**
 * hello: an example Stack Manager plugin (plain ESM, no build step).
 * Routes, relative to the prefix /api/ext/hello:
 *   GET    /greeting?name=Ada   greeting from plugins.config.hello.greeting
 *   GET    /notes               all notes, oldest first
 *   POST   /notes  {text}       adds a note (201, Location)
 *   GET    /notes/:id           one note, 404 hello.note_not_found
 *   DELETE /notes/:id           204, 404 hello.note_not_found
 */
import { randomUUID } from 'node:crypto';

const Note = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    text: { type: 'string' },
    created_at: { type: 'string' },
  },
};
const NoteParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' } },
};

/** The plugin: the host registers it under its prefix and passes config, logger, store, errors, host. */
export default async function hello(app, opts) {
  const { config, logger, store, errors, host } = opts;
  // Notes never change, so the value holds everything a reply needs and store.get suffices.
  const toNote = (id, value) => ({ id, text: value.text, created_at: value.created_at });
  const notFound = (id) => errors.create(404, 'note_not_found', `no note with id ${id}`);

  app.get(
    '/greeting',
    {
      schema: {
        querystring: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 100 } } },
        response: {
          200: { type: 'object', properties: { message: { type: 'string' }, app_version: { type: 'string' } } },
        },
      },
    },
    async (request) => ({
      message: `${config.greeting}, ${request.query.name ?? 'world'}!`,
      app_version: host.app_version,
    }),
  );

  app.get('/notes', { schema: { response: { 200: { type: 'array', items: Note } } } }, async () => {
    const entries = await store.list();
    return entries
      .map((e) => toNote(e.key, e.value))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  });

  app.post(
    '/notes',
    {
      schema: {
        body: {
          type: 'object',
          required: ['text'],
          properties: { text: { type: 'string', minLength: 1, maxLength: 1000 } },
        },
        response: { 201: Note },
      },
    },
    async (request, reply) => {
      if ((await store.list()).length >= config.max_notes) {
        throw errors.create(409, 'too_many_notes', `at most ${config.max_notes} notes are kept; delete one first`);
      }
      const id = `note-${randomUUID().slice(0, 8)}`;
      const saved = await store.put(id, { text: request.body.text, created_at: new Date().toISOString() });
      const note = toNote(saved.key, saved.value);
      logger.info({ note: id }, 'note added');
      return reply.code(201).header('location', `${request.routeOptions.url}/${id}`).send(note);
    },
  );

  app.get('/notes/:id', { schema: { params: NoteParams, response: { 200: Note } } }, async (request) => {
    const value = await store.get(request.params.id);
    if (value === undefined) throw notFound(request.params.id);
    return toNote(request.params.id, value);
  });

  app.delete('/notes/:id', { schema: { params: NoteParams } }, async (request, reply) => {
    if (!(await store.delete(request.params.id))) throw notFound(request.params.id);
    return reply.code(204).send();
  });
}
