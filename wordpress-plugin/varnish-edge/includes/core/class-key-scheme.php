<?php
/**
 * Surrogate key naming.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Builds namespaced xkey names. Every key is `<ns>-<kind>[-<id>]`.
 *
 * Object keys (one per thing shown):
 *   p-N    the post's own page (singular view of post N, its comment feed)
 *   pl-N   post N listed with its content/excerpt (archives, feeds, secondary loops)
 *   pn-N   post N linked by title only (page lists, previous/next links)
 *   pf-N   post N in a feed (feeds also show its modified time in lastBuildDate)
 *   pa-N   the author of post N shown (name, link, bio)
 *   pt-N   the terms of post N shown
 *   nb-N   the page of post N shows previous/next links (its neighbours)
 *   c-N    the comments of post N
 *   t-N    term N's name or link shown
 *   ts-N   term N's slug shown (post CSS classes)
 *   tc-N   term N's post count shown (REST term items, term lists with counts)
 *   u-N    user N shown as an author
 *   e-N    post N rendered inside another page: an attachment (image, gallery item, featured
 *          image) or a reusable block
 * Listing keys (which query a page shows): home, front, pta-<type>, tl-N (term archive),
 *   ul-N (author archive), date-YYYY[MM[DD]], feed, search, 404, pages (page lists),
 *   comments (site-wide comment listings), menus, widgets, lastmod (empty feeds, which print
 *   the site's last post modification time), tx-<taxonomy> (a list of the taxonomy's terms: which
 *   terms it shows changes when one is created, deleted, or becomes empty or not), tcx-<taxonomy>
 *   (a list shaped by the taxonomy's counts: tag clouds, ordered by count, padded counts).
 * Identity keys: site-name, site-tagline, site-icon, site-logo (read wherever that option is: nearly
 *   every page, feeds, the REST index).
 * REST keys: r-p-N, r-t-N, r-u-N (resources), r-c-<base> (a collection paged by date, name or id),
 *   r-q-<base> (a collection filtered, searched or ordered by content: any change of its base).
 */
class Key_Scheme {

	/**
	 * A surrogate key, as the protocol and the purger accept it (testdata/key-grammar.json).
	 */
	public const KEY_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$';

	/**
	 * A site's key namespace (testdata/key-grammar.json).
	 */
	public const NAMESPACE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,47}$';

	/** @var string Namespace prefix. */
	private $ns;

	/**
	 * Constructor.
	 *
	 * @param string $ns Namespace.
	 */
	public function __construct( string $ns ) {
		$this->ns = $ns;
	}

	/**
	 * Whether a string is a valid surrogate key (`$` without a trailing newline, as in the purger).
	 */
	public static function is_valid_key( string $key ): bool {
		return 1 === preg_match( '/' . self::KEY_PATTERN . '/D', $key );
	}

	/**
	 * Whether a string is a valid key namespace.
	 */
	public static function is_valid_namespace( string $ns ): bool {
		return 1 === preg_match( '/' . self::NAMESPACE_PATTERN . '/D', $ns );
	}

	/**
	 * A namespaced key; long or unusual suffixes are hashed to stay within the key grammar.
	 *
	 * @param string          $kind Kind.
	 * @param string|int|null $id   Id or name.
	 */
	public function key( string $kind, string|int|null $id = null ): string {
		$key = $this->ns . '-' . $kind . ( null === $id ? '' : '-' . $id );
		if ( ! self::is_valid_key( $key ) ) {
			$key = $this->ns . '-' . $kind . '-h' . substr( md5( (string) $id ), 0, 16 );
		}
		return $key;
	}

	/**
	 * Key `p-N`: post N's own page.
	 */
	public function post( int $id ): string {
		return $this->key( 'p', $id );
	}

	/**
	 * Key `pl-N`: post N listed with its content or excerpt.
	 */
	public function post_listed( int $id ): string {
		return $this->key( 'pl', $id );
	}

	/**
	 * Key `pn-N`: post N linked by its title only.
	 */
	public function post_linked( int $id ): string {
		return $this->key( 'pn', $id );
	}

	/**
	 * Key `pf-N`: post N in a feed.
	 */
	public function post_feed( int $id ): string {
		return $this->key( 'pf', $id );
	}

	/**
	 * Key `pa-N`: the author of post N shown.
	 */
	public function post_author( int $id ): string {
		return $this->key( 'pa', $id );
	}

	/**
	 * Key `pt-N`: the terms of post N shown.
	 */
	public function post_terms( int $id ): string {
		return $this->key( 'pt', $id );
	}

	/**
	 * Key `nb-N`: the page of post N, which links its previous/next posts.
	 */
	public function neighbors( int $id ): string {
		return $this->key( 'nb', $id );
	}

	/**
	 * Key `c-N`: the comments of post N.
	 */
	public function comments( int $id ): string {
		return $this->key( 'c', $id );
	}

	/**
	 * Key `e-N`: an attachment or reusable block rendered inside a page.
	 */
	public function embedded( int $id ): string {
		return $this->key( 'e', $id );
	}

	/**
	 * A key named by other code or a person: `<ns>-<name>`; a name already carrying this site's
	 * namespace is kept as it is. A name outside the key grammar stays outside it (check with
	 * `is_valid_key()`).
	 *
	 * @param string $name Key name without the namespace (e.g. `shop`, `p-42`).
	 */
	public function custom( string $name ): string {
		$name = trim( $name );
		if ( 0 === strpos( $name, $this->ns . '-' ) ) {
			$name = substr( $name, strlen( $this->ns ) + 1 );
		}
		return $this->key( $name );
	}

	/**
	 * Key `t-N`: term N's name or link shown.
	 */
	public function term( int $id ): string {
		return $this->key( 't', $id );
	}

	/**
	 * Key `ts-N`: term N's slug shown (post CSS classes).
	 */
	public function term_slug( int $id ): string {
		return $this->key( 'ts', $id );
	}

	/**
	 * Key `tc-N`: term N's post count shown.
	 */
	public function term_count( int $id ): string {
		return $this->key( 'tc', $id );
	}

	/**
	 * Key `tx-<taxonomy>`: a list of the taxonomy's terms (which terms it shows).
	 */
	public function term_list( string $taxonomy ): string {
		return $this->key( 'tx', $taxonomy );
	}

	/**
	 * Key `tcx-<taxonomy>`: a list shaped by the counts of the taxonomy's terms (a tag cloud's
	 * sizes, an order by count, counts padded with the children's).
	 */
	public function term_counts( string $taxonomy ): string {
		return $this->key( 'tcx', $taxonomy );
	}

	/**
	 * Key `tl-N`: term N's archive.
	 */
	public function term_listing( int $id ): string {
		return $this->key( 'tl', $id );
	}

	/**
	 * Key `u-N`: user N shown as an author.
	 */
	public function user( int $id ): string {
		return $this->key( 'u', $id );
	}

	/**
	 * Key `ul-N`: user N's author archive.
	 */
	public function author_listing( int $id ): string {
		return $this->key( 'ul', $id );
	}

	/**
	 * Key `pta-<type>`: a post type archive.
	 */
	public function post_type_archive( string $type ): string {
		return $this->key( 'pta', $type );
	}

	/**
	 * Date archive key.
	 *
	 * @param string $ymd Year, year+month or year+month+day digits.
	 */
	public function date( string $ymd ): string {
		return $this->key( 'date', $ymd );
	}

	/**
	 * Listing kind keys: home, front, feed, search, 404, pages, comments, menus, widgets.
	 */
	public function listing( string $kind ): string {
		return $this->key( $kind );
	}

	/**
	 * Key `site-<part>`: a part of the site's identity shown (`name`, `tagline`, `icon`, `logo`).
	 */
	public function identity( string $part ): string {
		return $this->key( 'site', $part );
	}

	/**
	 * Key `r-p-N`: post N's REST item.
	 */
	public function rest_post( int $id ): string {
		return $this->key( 'r-p', $id );
	}

	/**
	 * Key `r-t-N`: term N's REST item.
	 */
	public function rest_term( int $id ): string {
		return $this->key( 'r-t', $id );
	}

	/**
	 * Key `r-u-N`: user N's REST item.
	 */
	public function rest_user( int $id ): string {
		return $this->key( 'r-u', $id );
	}

	/**
	 * Key `r-c-<base>`: a REST collection.
	 *
	 * @param string $base Route base (post type rest_base, taxonomy, users).
	 */
	public function rest_collection( string $base ): string {
		return $this->key( 'r-c', $base );
	}

	/**
	 * Key `r-q-<base>`: a REST collection whose members depend on content (filtered, searched,
	 * ordered by title or count), purged by any change to an item of its base.
	 */
	public function rest_query( string $base ): string {
		return $this->key( 'r-q', $base );
	}

	/**
	 * Keys of every REST collection of a base: the plain one (`r-c-`) and the filtered ones
	 * (`r-q-`), both of which an item entering or leaving the base changes.
	 *
	 * @return string[]
	 */
	public function rest_lists( string $base ): array {
		return array( $this->rest_collection( $base ), $this->rest_query( $base ) );
	}

	/**
	 * Group key of a class (e.g. `<ns>-pl-many`).
	 */
	public function group( string $class ): string {
		return $this->ns . '-' . $class . '-many';
	}

	/**
	 * Class of a per-object key of this namespace, or null (e.g. `pl` for `<ns>-pl-42`).
	 */
	public function class_of( string $key ): ?string {
		$prefix = $this->ns . '-';
		if ( 0 !== strpos( $key, $prefix ) ) {
			return null;
		}
		if ( preg_match( '/^(r-[ptu]|pl|pn|pf|pa|pt|nb|t|ts|tc|u|c|e)-[0-9]+$/', substr( $key, strlen( $prefix ) ), $m ) ) {
			return $m[1];
		}
		return null;
	}

	/**
	 * Keys to purge for a set of keys: each per-object key also purges its group key,
	 * because an oversize page may carry the group key instead.
	 *
	 * @param string[] $keys Keys.
	 * @return string[]
	 */
	public function with_groups( array $keys ): array {
		$out = array();
		foreach ( $keys as $key ) {
			$out[ $key ] = true;
			$class       = $this->class_of( $key );
			if ( null !== $class ) {
				$out[ $this->group( $class ) ] = true;
			}
		}
		return array_keys( $out );
	}

	/**
	 * Split keys into header lines of at most $line_budget bytes; when the total exceeds
	 * $total_budget, collapse the largest groupable class into its group key until it fits.
	 *
	 * @param string[] $keys         Keys.
	 * @param int      $line_budget  Max bytes per header value.
	 * @param int      $total_budget Max bytes over all lines.
	 * @return string[] Header values.
	 */
	public function header_lines( array $keys, int $line_budget = 4000, int $total_budget = 16000 ): array {
		$keys = array_values( array_unique( $keys ) );
		while ( self::total_bytes( $keys ) > $total_budget ) {
			$by_class = array();
			foreach ( $keys as $key ) {
				$class = $this->class_of( $key );
				if ( null !== $class ) {
					$by_class[ $class ][] = $key;
				}
			}
			if ( array() === $by_class ) {
				break;
			}
			uasort(
				$by_class,
				static function ( array $a, array $b ): int {
					return count( $b ) <=> count( $a );
				}
			);
			$class  = array_key_first( $by_class );
			$keys   = array_values( array_diff( $keys, $by_class[ $class ] ) );
			$keys[] = $this->group( $class );
		}

		$lines   = array();
		$current = '';
		foreach ( $keys as $key ) {
			if ( '' !== $current && strlen( $current ) + 1 + strlen( $key ) > $line_budget ) {
				$lines[] = $current;
				$current = '';
			}
			$current .= ( '' === $current ? '' : ' ' ) . $key;
		}
		if ( '' !== $current ) {
			$lines[] = $current;
		}
		return $lines;
	}

	/**
	 * Bytes of the keys joined by spaces.
	 *
	 * @param string[] $keys Keys.
	 */
	private static function total_bytes( array $keys ): int {
		return array() === $keys ? 0 : strlen( implode( ' ', $keys ) );
	}
}
