const ah = require('node:async_hooks');
const orig = ah.createHook;
ah.createHook = function (cbs) {
  const h = orig.call(this, cbs);
  const en = h.enable.bind(h);
  h.enable = () => { require('fs').appendFileSync('/tmp/hookspy.log', process.pid + ' ' + 'HOOK ENABLE ' + Object.keys(cbs).join(',') + '\n' + new Error().stack.split('\n').slice(2, 7).join('\n') + '\n'); return en(); };
  return h;
};
for (const m of ['run', 'enterWith']) {
  const o = ah.AsyncLocalStorage.prototype[m];
  ah.AsyncLocalStorage.prototype[m] = function (...a) { if (!this.__spied) { this.__spied = 1; require('fs').appendFileSync('/tmp/hookspy.log', process.pid + ' ' + 'ALS ' + m + '\n' + new Error().stack.split('\n').slice(2, 7).join('\n') + '\n'); } return o.apply(this, a); };
}
