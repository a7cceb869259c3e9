import { z } from 'zod';

/**
 * An IAM role ARN (IAM User Guide, "IAM identifiers", ARNs): any partition
 * (`aws`, `aws-cn`, `aws-us-gov`), a 12-digit account, an optional path.
 * MinIO accepts its own `arn:minio:iam:::role/...` form, so the service
 * part is `iam` in both.
 */
const roleArn = z
  .string()
  .regex(
    /^arn:[a-z][a-z0-9-]*:iam::(\d{12})?:role\/[\w+=,.@/-]{1,512}$/,
    'must be an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)',
  );

/** Claim values a mapping entry matches; one in common with the caller's suffices. */
const claimValues = z.array(z.string().min(1)).min(1);

/**
 * What of the caller a session tag carries, by the name the rest of the
 * gateway gives it (the verified principal, never the raw token): `subject`
 * (`sub`), `issuer` (`iss`), `client_id`, `groups`, `scopes` or `tenant`.
 */
export const TAG_CLAIMS = ['subject', 'issuer', 'client_id', 'groups', 'scopes', 'tenant'] as const;
export type TagClaim = (typeof TAG_CLAIMS)[number];

/**
 * A session tag key (IAM User Guide, "Passing session tags in AWS STS"):
 * 1 to 128 characters of letters, digits, spaces and `_.:/=+-@`; not
 * starting with `aws:` (reserved).
 */
const TAG_KEY = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$/u;

/** STS accepts at most 50 session tags. */
const MAX_SESSION_TAGS = 50;

/**
 * Options of `callerIdentity`: each caller reads with credentials of their
 * own, from AssumeRoleWithWebIdentity with an identity token the gateway
 * mints for them. The allowlist (`roleArns`) and the STS endpoint are the
 * platform operator's (operator-only paths of the type's model); the
 * mapping, the default and the tags are a tenant admin's.
 */
export const callerIdentitySchema = z
  .strictObject({
    /** The roles callers of this source may be given: the operator's allowlist. */
    roleArns: z
      .array(roleArn)
      .min(1)
      .refine((list) => new Set(list).size === list.length, { message: 'roleArns must not repeat' }),
    /**
     * The first entry whose `match` the caller satisfies chooses their role.
     * Each present matcher needs one value in common with the caller's;
     * absent matchers impose nothing (an empty match matches everyone).
     */
    mapping: z
      .array(
        z.strictObject({
          match: z.strictObject({
            groups: claimValues.optional(),
            scopes: claimValues.optional(),
            subjects: claimValues.optional(),
          }),
          roleArn,
        }),
      )
      .default([]),
    /**
     * A caller no entry matches: `refuse` (the default) shows them nothing of
     * this source (an empty listing, reads not found), or `{ roleArn }`.
     */
    default: z.union([z.literal('refuse'), z.strictObject({ roleArn })]).default('refuse'),
    /**
     * Session tags (`aws:PrincipalTag/<name>` in IAM policies) and what of the
     * caller each carries. Default none.
     */
    sessionTags: z
      .record(z.string(), z.enum(TAG_CLAIMS))
      .default({})
      .superRefine((tags, context) => {
        const names = Object.keys(tags);
        if (names.length > MAX_SESSION_TAGS) {
          context.addIssue({ code: 'custom', message: `at most ${MAX_SESSION_TAGS} session tags` });
        }
        const seen = new Set<string>();
        for (const name of names) {
          const problem = !TAG_KEY.test(name)
            ? 'a session tag name is 1 to 128 letters, digits, spaces or _.:/=+-@'
            : /^aws:/i.test(name)
              ? 'a session tag name must not start with "aws:" (reserved by AWS)'
              : seen.has(name.toLowerCase())
                ? 'session tag names must differ in more than case (IAM compares them case-insensitively)'
                : undefined;
          seen.add(name.toLowerCase());
          if (problem !== undefined) context.addIssue({ code: 'custom', path: [name], message: problem });
        }
      }),
    /**
     * Where AssumeRoleWithWebIdentity is sent (MinIO's STS is its S3
     * endpoint). Absent: AWS STS in the source's region,
     * `https://sts.{region}.amazonaws.com/`. The operator's.
     */
    stsEndpoint: z
      .url({ protocol: /^https?$/, error: 'stsEndpoint must be an http(s) URL' })
      .refine((value) => {
        const url = new URL(value);
        return url.username === '' && url.password === '' && url.search === '' && url.hash === '';
      }, 'stsEndpoint must not carry credentials, a query or a fragment')
      .optional(),
    /** The identity token's `aud`, as the role's trust policy requires it. Default `sts.amazonaws.com`. */
    audience: z.string().min(1).max(256).default('sts.amazonaws.com'),
    /** Lifetime asked of STS (DurationSeconds): 900 to 43,200 (the role's maximum applies). Default 3,600. */
    durationSeconds: z.number().int().min(900).max(43_200).default(3_600),
  })
  .superRefine((value, context) => {
    // A role outside the allowlist is refused where it is written, naming the field.
    const allowed = new Set(value.roleArns);
    const outside = (arn: string, path: (string | number)[]) => {
      if (!allowed.has(arn)) {
        context.addIssue({
          code: 'custom',
          path,
          message: `role "${arn}" is not in callerIdentity.roleArns, the roles an operator allows this source to assume`,
        });
      }
    };
    value.mapping.forEach((entry, i) => outside(entry.roleArn, ['mapping', i, 'roleArn']));
    if (value.default !== 'refuse') outside(value.default.roleArn, ['default', 'roleArn']);
  });

/** `callerIdentity` of an S3 source, defaults applied. */
export type CallerIdentityOptions = z.output<typeof callerIdentitySchema>;
