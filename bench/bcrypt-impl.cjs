// The bcrypt implementation the server uses, for the ceiling measurement.
'use strict';
const bcrypt = require('bcryptjs');

module.exports = { name: 'bcryptjs', hashSync: (p, c) => bcrypt.hashSync(p, c), compareSync: (p, h) => bcrypt.compareSync(p, h) };
