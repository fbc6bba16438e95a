// The bcrypt implementation the server uses (src/lib/password.ts), for the ceiling measurement.
'use strict';
const bcrypt = require('@node-rs/bcrypt');

module.exports = {
  name: '@node-rs/bcrypt',
  hashSync: (password, cost) => bcrypt.hashSync(password, cost),
  compareSync: (password, hash) => bcrypt.verifySync(password, hash),
};
