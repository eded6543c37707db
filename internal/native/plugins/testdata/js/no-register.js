// Exports no register function: the original refused to load it.
module.exports = { name: 'no-register' };
