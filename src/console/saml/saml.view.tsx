import type { ComponentChildren } from 'preact';
import type { z } from 'zod';
import type { samlAppResponse, samlAppsBody } from '../../wire/saml/saml-apps.schemas';
import { pageEnv } from '../../views/env';
import { Actions, RefusalText, Submit, Time } from '../../views/kit';
import {
  ActionButton,
  Badge,
  bindForm,
  Checkbox,
  CopyValue,
  Facts,
  Field,
  PostForm,
  Select,
  TextArea,
  type FieldErrors,
} from '../../views/console/components';
import { BackLink, ListPage } from '../../views/console/list';
import { renderConsole, type ConsoleFrame } from '../../views/console/layout';

/** SAML applications (CONTRACT §19): the IdP values to give an SP, the apps, and the form of one app. */

export type SamlApp = z.output<typeof samlAppResponse>;
export type Idp = z.output<typeof samlAppsBody>['idp'];

const x = () => pageEnv().t.console.saml;

export function renderSamlApps(frame: ConsoleFrame, data: { apps: SamlApp[]; idp: Idp }): string {
  const { saml: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <ListPage
      says={h}
      create={{ href: '/admin/saml-apps/new', label: h.create, first: h.createOne }}
      rows={data.apps}
      columns={[
        { label: k.name, cell: (a) => <a href={`/admin/saml-apps/${a.id}`}>{a.name}</a> },
        { label: h.entityId, wrap: true, cell: (a) => <code>{a.entity_id}</code> },
        { label: k.status, cell: (a) => <Badge on={a.enabled} yes={h.enabled} no={h.disabled} /> },
        {
          label: h.signIn,
          cell: (a) =>
            a.enabled ? (
              <a href={a.idp_initiated_url} aria-label={h.signInNamed(a.name)}>
                {h.signInLink}
              </a>
            ) : (
              '—'
            ),
        },
      ]}
    >
      <IdpFacts frame={frame} idp={data.idp} />
    </ListPage>,
  );
}

/** What an SP's administrator asks for, to copy; and the rotation of the key that signs for every app. */
function IdpFacts(props: { frame: ConsoleFrame; idp: Idp }) {
  const h = x();
  const { idp } = props;
  return (
    <section aria-labelledby="idp-values">
      <h2 id="idp-values">{h.idpTitle}</h2>
      <p>{h.idpIntro}</p>
      <Facts
        items={[
          [h.metadataUrl, <CopyValue id="idp-metadata-url" label={h.metadataUrl} value={idp.metadata_url} />],
          [h.idpEntityId, <CopyValue id="idp-entity-id" label={h.idpEntityId} value={idp.entity_id} />],
          [h.ssoUrl, <CopyValue id="idp-sso-url" label={h.ssoUrl} value={idp.sso_url} />],
          [h.sloUrl, <CopyValue id="idp-slo-url" label={h.sloUrl} value={idp.slo_url} />],
          ...idp.certificates.map((pem, i): [string, ComponentChildren] => [
            i === 0 ? h.certificate : h.previousCertificate,
            <CopyValue id={`idp-certificate-${i}`} label={i === 0 ? h.certificate : h.previousCertificate} value={pem} />,
          ]),
        ]}
      />
      <p class="hint">{h.rotateHint}</p>
      <Actions>
        <ActionButton action="/admin/saml-apps/rotate-key" csrf={props.frame.csrf} label={h.rotate} danger />
      </Actions>
    </section>
  );
}

export interface SamlAppValues {
  name: string;
  metadata_url: string;
  metadata_xml: string;
  entity_id: string;
  acs_urls: string;
  slo_url: string;
  slo_binding: string;
  name_id_format: string;
  sp_certificate: string;
  sp_encryption_certificate: string;
  want_authn_requests_signed: boolean;
  sign_response: boolean;
  sign_assertion: boolean;
  encrypt_assertion: boolean;
  enabled: boolean;
  attr_email: string;
  attr_given_name: string;
  attr_family_name: string;
  attr_name: string;
  attr_roles: string;
}

export function renderSamlAppForm(frame: ConsoleFrame, data: { app?: SamlApp; values: SamlAppValues; errors: FieldErrors }): string {
  const a = data.app;
  const v = data.values;
  const e = data.errors;
  const bound = bindForm(v, e);
  const { saml: h, common: k } = pageEnv().t.console;
  return renderConsole(
    frame,
    <>
      <BackLink href="/admin/saml-apps" label={h.back} heading={a ? h.named(a.name) : h.create} />
      {a ? (
        <Facts
          items={[
            [h.entityId, <code>{a.entity_id}</code>],
            [k.status, <Badge on={a.enabled} yes={h.enabled} no={h.disabled} />],
            [
              h.signIn,
              <>
                <CopyValue id="idp-initiated-url" label={h.signIn} value={a.idp_initiated_url} />
                {a.enabled ? <a href={a.idp_initiated_url}>{h.testSignIn}</a> : null}
              </>,
            ],
            [k.created, <Time at={a.created_at} />],
          ]}
        />
      ) : null}
      <PostForm action={a ? `/admin/saml-apps/${a.id}` : '/admin/saml-apps'} csrf={frame.csrf}>
        <Field {...bound('name')} label={k.name} required />
        <fieldset>
          <legend>{h.fromMetadata}</legend>
          <p class="hint">{h.fromMetadataHint}</p>
          <Field {...bound('metadata_url')} label={h.metadataUrlField} type="url" hint={h.metadataUrlHint} />
          <TextArea {...bound('metadata_xml')} label={h.metadataXml} />
        </fieldset>
        <fieldset>
          <legend>{h.byHand}</legend>
          <Field {...bound('entity_id')} label={h.entityId} />
          <TextArea {...bound('acs_urls')} label={h.acsUrls} hint={h.acsUrlsHint} />
          <Field {...bound('slo_url')} label={h.spSloUrl} type="url" />
          <Select
            name="slo_binding"
            label={h.sloBinding}
            value={v.slo_binding}
            options={[
              { value: 'HTTP-Redirect', label: 'HTTP-Redirect' },
              { value: 'HTTP-POST', label: 'HTTP-POST' },
            ]}
          />
          <TextArea {...bound('sp_certificate')} label={h.spCertificate} hint={h.spCertificateHint} />
          <TextArea {...bound('sp_encryption_certificate')} label={h.spEncryptionCertificate} hint={h.spEncryptionCertificateHint} />
          <Checkbox name="want_authn_requests_signed" label={h.wantSigned} checked={v.want_authn_requests_signed} />
          <CheckError name="want_authn_requests_signed" errors={e} />
        </fieldset>
        <Select
          name="name_id_format"
          label={h.nameIdFormat}
          value={v.name_id_format}
          options={[
            { value: '', label: h.nameIdDefault },
            { value: 'emailAddress', label: h.nameIdEmail },
            { value: 'persistent', label: h.nameIdPersistent },
            { value: 'transient', label: h.nameIdTransient },
            { value: 'unspecified', label: h.nameIdUnspecified },
          ]}
        />
        <fieldset>
          <legend>{h.attributes}</legend>
          <p class="hint">{h.attributesHint}</p>
          <Field {...bound('attr_email')} label={h.attrEmail} />
          <Field {...bound('attr_given_name')} label={h.attrGivenName} />
          <Field {...bound('attr_family_name')} label={h.attrFamilyName} />
          <Field {...bound('attr_name')} label={h.attrName} />
          <Field {...bound('attr_roles')} label={h.attrRoles} />
        </fieldset>
        <fieldset>
          <legend>{h.security}</legend>
          <Checkbox name="sign_response" label={h.signResponse} checked={v.sign_response} />
          <Checkbox name="sign_assertion" label={h.signAssertion} checked={v.sign_assertion} />
          <Checkbox name="encrypt_assertion" label={h.encryptAssertion} checked={v.encrypt_assertion} hint={h.encryptHint} />
          <CheckError name="sign_response" errors={e} />
          <CheckError name="encrypt_assertion" errors={e} />
          <Checkbox name="enabled" label={h.enabledField} checked={v.enabled} />
        </fieldset>
        <Submit label={a ? h.save : h.createButton} />
      </PostForm>
      {a ? (
        <Actions>
          <ActionButton action={`/admin/saml-apps/${a.id}/delete`} csrf={frame.csrf} label={h.delete} danger />
        </Actions>
      ) : null}
    </>,
  );
}

/** A checkbox's refusal (the API names the flag), below it; the error summary links to the checkbox itself. */
function CheckError(props: { name: string; errors: FieldErrors }) {
  const error = props.errors[props.name];
  return error ? (
    <p class="field-error" id={`f-${props.name}-error`}>
      <RefusalText value={error} />
    </p>
  ) : null;
}
