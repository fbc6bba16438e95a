/** CONTRACT §19 defaults, declared once (the REST schema, the metadata import and the console read them). */
export const DEFAULT_SAML_ATTRIBUTES = {
  email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  given_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
  family_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
  name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  roles: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
} as const satisfies Record<'email' | 'given_name' | 'family_name' | 'name' | 'roles', string>;
