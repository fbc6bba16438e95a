'use strict';
// Runs in a worker thread (piscina) so that bcrypt's CPU work never blocks the event loop.
const bcrypt = require('bcryptjs');

module.exports = function run(task) {
  if (task.op === 'hash') return bcrypt.hashSync(task.password, task.rounds);
  return bcrypt.compareSync(task.password, task.hash);
};
