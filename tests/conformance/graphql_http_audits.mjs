// graphql-http's server audits (those its website runs) against one GraphQL over HTTP endpoint.
// Usage: node graphql_http_audits.mjs URL
// Prints one JSON array: each audit's id, name and status, and when it is not ok, the reason and the answer.
import { serverAudits } from 'graphql-http';

const [url] = process.argv.slice(2);
const results = [];
for (const audit of serverAudits({ url, fetchFn: fetch })) {
  const result = await audit.fn();
  const entry = { id: result.id, name: result.name, status: result.status };
  if (result.status !== 'ok') {
    entry.reason = result.reason;
    entry.httpStatus = result.response.status;
    entry.body = await result.response.text().then((text) => text.slice(0, 500), () => '<read by the audit>');
  }
  results.push(entry);
}
console.log(JSON.stringify(results));
