// a route handler, run on each request
import { probe } from '../../../src/probe.js';

export const dynamic = 'force-dynamic';

export function GET() {
  return Response.json(probe());
}
