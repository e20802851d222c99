import { Agent, setGlobalDispatcher } from 'undici';

// The suites talk to processes they stop; idle keep-alive sockets to them would otherwise
// keep Jest alive for seconds after the last test.
setGlobalDispatcher(new Agent({ keepAliveTimeout: 200, keepAliveMaxTimeout: 200 }));
