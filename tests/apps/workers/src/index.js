import { probe } from './probe.js';

export default {
  fetch() {
    return Response.json(probe());
  },
};
