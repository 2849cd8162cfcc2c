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
 *   u-N    user N shown as an author
 *   e-N    post N rendered inside another page: an attachment (image, gallery item, featured
 *          image) or a reusable block
 * Listing keys (which query a page shows): home, front, pta-<type>, tl-N (term archive),
 *   ul-N (author archive), date-YYYY[MM[DD]], feed, search, 404, pages (page lists),
 *   comments (site-wide comment listings), menus, widgets, lastmod (empty feeds, which print
 *   the site's last post modification time).
 * REST keys: r-p-N, r-t-N, r-u-N (resources), r-c-<base> (a collection paged by date, name or id),
 *   r-q-<base> (a collection filtered, searched or ordered by content: any change of its base).
 */
class Key_Scheme {

	/**
	 * Namespace prefix.
	 *
	 * @var string
	 */
	private $ns;

	/**
	 * Constructor.
	 *
	 * @param string $ns Namespace.
	 */
	public function __construct( $ns ) {
		$this->ns = $ns;
	}

	/**
	 * A namespaced key; long or unusual suffixes are hashed to stay within the tag rule.
	 *
	 * @param string          $kind Kind.
	 * @param string|int|null $id   Id or name.
	 * @return string
	 */
	public function key( $kind, $id = null ) {
		$key = $this->ns . '-' . $kind . ( null === $id ? '' : '-' . $id );
		if ( strlen( $key ) > 128 || ! preg_match( '/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/', $key ) ) {
			$key = $this->ns . '-' . $kind . '-h' . substr( md5( (string) $id ), 0, 16 );
		}
		return $key;
	}

	/**
	 * Key `p-N`: post N's own page.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function post( $id ) {
		return $this->key( 'p', (int) $id );
	}

	/**
	 * Key `pl-N`: post N listed with its content or excerpt.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function post_listed( $id ) {
		return $this->key( 'pl', (int) $id );
	}

	/**
	 * Key `pn-N`: post N linked by its title only.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function post_linked( $id ) {
		return $this->key( 'pn', (int) $id );
	}

	/**
	 * Key `pf-N`: post N in a feed.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function post_feed( $id ) {
		return $this->key( 'pf', (int) $id );
	}

	/**
	 * Key `pa-N`: the author of post N shown.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function post_author( $id ) {
		return $this->key( 'pa', (int) $id );
	}

	/**
	 * Key `pt-N`: the terms of post N shown.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function post_terms( $id ) {
		return $this->key( 'pt', (int) $id );
	}

	/**
	 * Key `nb-N`: the page of post N, which links its previous/next posts.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function neighbors( $id ) {
		return $this->key( 'nb', (int) $id );
	}

	/**
	 * Key `c-N`: the comments of post N.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function comments( $id ) {
		return $this->key( 'c', (int) $id );
	}

	/**
	 * Key `e-N`: an attachment or reusable block rendered inside a page.
	 *
	 * @param int $id Attachment or reusable block id.
	 * @return string
	 */
	public function embedded( $id ) {
		return $this->key( 'e', (int) $id );
	}

	/**
	 * A key named by other code (the public API): `<ns>-<name>`; a name already carrying this
	 * site's namespace is kept as it is.
	 *
	 * @param string $name Key name without the namespace (e.g. `shop`, `p-42`).
	 * @return string
	 */
	public function custom( $name ) {
		$name = trim( (string) $name );
		if ( 0 === strpos( $name, $this->ns . '-' ) ) {
			$name = substr( $name, strlen( $this->ns ) + 1 );
		}
		return $this->key( $name );
	}

	/**
	 * Key `t-N`: term N's name or link shown.
	 *
	 * @param int $id Term id.
	 * @return string
	 */
	public function term( $id ) {
		return $this->key( 't', (int) $id );
	}

	/**
	 * Key `ts-N`: term N's slug shown (post CSS classes).
	 *
	 * @param int $id Term id.
	 * @return string
	 */
	public function term_slug( $id ) {
		return $this->key( 'ts', (int) $id );
	}

	/**
	 * Key `tl-N`: term N's archive.
	 *
	 * @param int $id Term id.
	 * @return string
	 */
	public function term_listing( $id ) {
		return $this->key( 'tl', (int) $id );
	}

	/**
	 * Key `u-N`: user N shown as an author.
	 *
	 * @param int $id User id.
	 * @return string
	 */
	public function user( $id ) {
		return $this->key( 'u', (int) $id );
	}

	/**
	 * Key `ul-N`: user N's author archive.
	 *
	 * @param int $id User id.
	 * @return string
	 */
	public function author_listing( $id ) {
		return $this->key( 'ul', (int) $id );
	}

	/**
	 * Key `pta-<type>`: a post type archive.
	 *
	 * @param string $type Post type.
	 * @return string
	 */
	public function post_type_archive( $type ) {
		return $this->key( 'pta', $type );
	}

	/**
	 * Date archive key.
	 *
	 * @param string $ymd Year, year+month or year+month+day digits.
	 * @return string
	 */
	public function date( $ymd ) {
		return $this->key( 'date', $ymd );
	}

	/**
	 * Listing kind keys: home, front, feed, search, 404, pages, comments, menus, widgets.
	 *
	 * @param string $kind Kind.
	 * @return string
	 */
	public function listing( $kind ) {
		return $this->key( $kind );
	}

	/**
	 * Key `r-p-N`: post N's REST item.
	 *
	 * @param int $id Post id.
	 * @return string
	 */
	public function rest_post( $id ) {
		return $this->key( 'r-p', (int) $id );
	}

	/**
	 * Key `r-t-N`: term N's REST item.
	 *
	 * @param int $id Term id.
	 * @return string
	 */
	public function rest_term( $id ) {
		return $this->key( 'r-t', (int) $id );
	}

	/**
	 * Key `r-u-N`: user N's REST item.
	 *
	 * @param int $id User id.
	 * @return string
	 */
	public function rest_user( $id ) {
		return $this->key( 'r-u', (int) $id );
	}

	/**
	 * Key `r-c-<base>`: a REST collection.
	 *
	 * @param string $base Route base (post type rest_base, taxonomy, users).
	 * @return string
	 */
	public function rest_collection( $base ) {
		return $this->key( 'r-c', $base );
	}

	/**
	 * Key `r-q-<base>`: a REST collection whose members depend on content (filtered, searched,
	 * ordered by title or count), purged by any change to an item of its base.
	 *
	 * @param string $base Route base.
	 * @return string
	 */
	public function rest_query( $base ) {
		return $this->key( 'r-q', $base );
	}

	/**
	 * Keys of every REST collection of a base: the plain one (`r-c-`) and the filtered ones
	 * (`r-q-`), both of which an item entering or leaving the base changes.
	 *
	 * @param string $base Route base.
	 * @return string[]
	 */
	public function rest_lists( $base ) {
		return array( $this->rest_collection( $base ), $this->rest_query( $base ) );
	}

	/**
	 * Group key of a class (e.g. `<ns>-pl-many`).
	 *
	 * @param string $class Class.
	 * @return string
	 */
	public function group( $class ) {
		return $this->ns . '-' . $class . '-many';
	}

	/**
	 * Class of a per-object key of this namespace, or null (e.g. `pl` for `<ns>-pl-42`).
	 *
	 * @param string $key Key.
	 * @return string|null
	 */
	public function class_of( $key ) {
		$prefix = $this->ns . '-';
		if ( 0 !== strpos( $key, $prefix ) ) {
			return null;
		}
		if ( preg_match( '/^(r-[ptu]|pl|pn|pf|pa|pt|nb|t|ts|u|c|e)-[0-9]+$/', substr( $key, strlen( $prefix ) ), $m ) ) {
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
	public function with_groups( array $keys ) {
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
	public function header_lines( array $keys, $line_budget = 4000, $total_budget = 16000 ) {
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
				static function ( $a, $b ) {
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
	 * @return int
	 */
	private static function total_bytes( array $keys ) {
		return array() === $keys ? 0 : strlen( implode( ' ', $keys ) );
	}
}
