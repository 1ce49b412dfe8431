// The graphql-ws client (graphql-transport-ws) against /graphql: subscribe, see a mutation's event, and provoke
// each close code the protocol defines for a client's mistake.
// Usage: node graphql_ws_scenario.mjs '{"ws": "ws://…/graphql", "http": "http://…/graphql", "token": "kdv_…",
//                                       "workspaceId": "…"}'
// Prints one JSON object: {"event": {…}, "closes": {name: {"expected": code, "received": code}}}.
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL, MessageType, createClient, stringifyMessage } from 'graphql-ws';
import WebSocket from 'ws';

const { ws: url, http, token, workspaceId } = JSON.parse(process.argv[2]);
const WAIT_MS = 15000;
const TASK_EVENTS = 'subscription($w: ID!) { taskEvents(workspaceId: $w) { kind task { id title } } }';
const CREATE_TASK =
  'mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename ... on CreateTaskPayload { task { id } } } }';

function bounded(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function client(authorization) {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: authorization },
    retryAttempts: 0,
    lazy: true,
  });
}

// Subscribe with the official client, run createTask over HTTP once the server says it listens, and wait for
// that task's CREATED event.
async function eventOfAMutation() {
  const subscriber = client(`Bearer ${token}`);
  const events = subscriber.iterate({ query: TASK_EVENTS, variables: { w: workspaceId } });
  try {
    const first = await bounded(events.next(), 'SUBSCRIBED');
    const title = `conformance ${Date.now()}`;
    const created = await fetch(http, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: CREATE_TASK, variables: { i: { workspaceId, title } } }),
    }).then((response) => response.json());
    const taskId = created.data.createTask.task.id;
    for (;;) {
      const { value, done } = await bounded(events.next(), 'the CREATED event');
      if (done) throw new Error('the subscription ended before the event');
      const event = value.data.taskEvents;
      if (event.kind === 'CREATED' && event.task.id === taskId) {
        return { first: first.value.data.taskEvents.kind, kind: event.kind, title: event.task.title, sent: title };
      }
    }
  } finally {
    await events.return();
    await subscriber.dispose();
  }
}

// The official client with a token the server refuses: the close code it reports.
async function refusedToken() {
  const refused = client('Bearer kdv_not-a-real-token');
  try {
    await bounded(refused.iterate({ query: TASK_EVENTS, variables: { w: workspaceId } }).next(), 'the refusal');
    return null;
  } catch (error) {
    return error.code ?? String(error);
  } finally {
    await refused.dispose();
  }
}

// A raw socket that does `act` once open (messages as graphql-ws writes them): the code it is closed with.
function closeCodeAfter(act, protocols = [GRAPHQL_TRANSPORT_WS_PROTOCOL]) {
  return bounded(
    new Promise((resolve, reject) => {
      const socket = new WebSocket(url, protocols);
      socket.on('open', () => act(socket));
      socket.on('close', (code) => resolve(code));
      socket.on('error', reject);
    }),
    'the close',
  );
}

const send = (socket, message) => socket.send(stringifyMessage(message));
const init = (socket) =>
  send(socket, { type: MessageType.ConnectionInit, payload: { Authorization: `Bearer ${token}` } });
const subscribe = (socket) =>
  send(socket, { id: 'one', type: MessageType.Subscribe, payload: { query: TASK_EVENTS, variables: { w: workspaceId } } });
const afterAck = (socket, act) => {
  socket.on('message', (data) => JSON.parse(data).type === MessageType.ConnectionAck && act(socket));
  init(socket);
};

const event = await eventOfAMutation();
const closes = {
  BadRequest: [CloseCode.BadRequest, await closeCodeAfter((s) => s.send(JSON.stringify({ type: 'nonsense' })))],
  Unauthorized: [CloseCode.Unauthorized, await closeCodeAfter(subscribe)],
  Forbidden: [CloseCode.Forbidden, await refusedToken()],
  SubprotocolNotAcceptable: [CloseCode.SubprotocolNotAcceptable, await closeCodeAfter(() => {}, [])],
  ConnectionInitialisationTimeout: [CloseCode.ConnectionInitialisationTimeout, await closeCodeAfter(() => {})],
  SubscriberAlreadyExists: [
    CloseCode.SubscriberAlreadyExists,
    await closeCodeAfter((s) => afterAck(s, () => (subscribe(s), subscribe(s)))),
  ],
  TooManyInitialisationRequests: [
    CloseCode.TooManyInitialisationRequests,
    await closeCodeAfter((s) => (init(s), init(s))),
  ],
};
const report = Object.fromEntries(
  Object.entries(closes).map(([name, [expected, received]]) => [name, { expected, received }]),
);
console.log(JSON.stringify({ event, closes: report }));
