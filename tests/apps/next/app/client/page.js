import Probe from './probe-client.js';

export default function Page() {
  return <Probe />;
}
