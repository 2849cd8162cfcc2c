<?php
/**
 * Surrogate keys on responses.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Records what a page shows while it renders and emits `xkey` (and, when the purge pipeline is
 * configured, `Surrogate-Control`) headers on anonymous front-end and REST GET responses.
 */
class Surrogate_Keys {

	/** @var Settings */
	private $settings;

	/** @var array<string,bool> */
	private $keys = array();

	/** @var bool */
	private $buffering = false;

	/** @var bool The page was flushed before it was complete: the keys sent may miss some. */
	private $partial = false;

	/** @var bool Inside get_post_class(), which shows term slugs only (as CSS classes). */
	private $in_post_class = false;

	/**
	 * Constructor.
	 *
	 * @param Settings $settings Settings.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Key scheme.
	 *
	 * @return Key_Scheme
	 */
	private function scheme() {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/**
	 * Add keys.
	 *
	 * @param string[] $keys Keys.
	 */
	public function add( array $keys ) {
		foreach ( $keys as $key ) {
			$this->keys[ $key ] = true;
		}
	}

	/**
	 * Keys recorded so far.
	 *
	 * @return string[]
	 */
	public function keys() {
		return array_keys( $this->keys );
	}

	/**
	 * Whether this request may be cached for everyone.
	 *
	 * @return bool
	 */
	public function is_cacheable_request() {
		$method = isset( $_SERVER['REQUEST_METHOD'] ) ? strtoupper( sanitize_key( wp_unslash( $_SERVER['REQUEST_METHOD'] ) ) ) : 'GET';
		if ( ! in_array( $method, array( 'GET', 'HEAD' ), true ) || is_user_logged_in() ) {
			return false;
		}
		if ( is_admin() || wp_doing_ajax() || wp_doing_cron() || ( defined( 'WP_CLI' ) && WP_CLI ) ) {
			return false;
		}
		return ! is_preview();
	}

	/* ------------------------------------------------------------ front end */

	/**
	 * Action `template_redirect` (early): keys for the main query, then buffer the page so the
	 * headers can name everything rendered in it.
	 */
	public function start() {
		if ( ! $this->is_cacheable_request() ) {
			return;
		}
		$this->add_main_query_keys();
		$this->buffering = true;
		ob_start( array( $this, 'finish' ) );
	}

	/**
	 * Output buffer callback: send the headers once the whole page is known.
	 *
	 * @param string $html  Buffer.
	 * @param int    $phase Phase flags (PHP_OUTPUT_HANDLER_*).
	 * @return string
	 */
	public function finish( $html, $phase ) {
		// Normally the final flush. A theme flushing earlier sends the headers with what is known
		// by then: keys of what renders later are missing, so that response must not get the
		// long TTL (it stays on the microcache).
		if ( $this->buffering && ( $phase & ( PHP_OUTPUT_HANDLER_FINAL | PHP_OUTPUT_HANDLER_FLUSH ) ) ) {
			$this->buffering = false;
			$this->partial   = ! ( $phase & PHP_OUTPUT_HANDLER_FINAL );
			$this->send_headers();
		}
		return $html;
	}

	/**
	 * Emit the headers (no-op when headers are already out).
	 */
	public function send_headers() {
		if ( headers_sent() || array() === $this->keys ) {
			return;
		}
		header_remove( 'xkey' );
		$this->emit_headers();
	}

	/**
	 * Write the xkey lines (each within the line budget) and, when due, Surrogate-Control.
	 *
	 * @param int|null $status Response status; null for the current one.
	 */
	private function emit_headers( $status = null ) {
		$this->add_filtered_keys();
		foreach ( $this->scheme()->header_lines( $this->keys() ) as $line ) {
			header( 'xkey: ' . $line, false );
		}
		if ( $this->partial ) {
			return;
		}
		foreach ( $this->surrogate_control( $status ) as $name => $value ) {
			header( $name . ': ' . $value );
		}
	}

	/**
	 * Keys other plugins and themes add to the current response (`varnish_edge_response_keys`).
	 */
	private function add_filtered_keys() {
		/**
		 * Keys to add to the current anonymous response, as names without the namespace (e.g.
		 * `shop`, `product-cat-12`): purge them later with `varnish_edge_purge_keys`.
		 *
		 * @param string[] $keys Key names.
		 */
		$names  = (array) apply_filters( 'varnish_edge_response_keys', array() );
		$scheme = $this->scheme();
		foreach ( $names as $name ) {
			if ( is_scalar( $name ) && '' !== trim( (string) $name ) ) {
				$this->add( array( $scheme->custom( (string) $name ) ) );
			}
		}
	}

	/**
	 * Surrogate-Control for this response: the long TTL when purges are configured and the
	 * response is a cacheable status; nothing otherwise (Varnish keeps its 1 s microcache).
	 *
	 * @param int|null $status Status code (defaults to the current one).
	 * @return array<string,string>
	 */
	public function surrogate_control( $status = null ) {
		$status = null === $status ? (int) http_response_code() : (int) $status;
		if ( ! $this->settings->is_configured() || ! in_array( $status, array( 200, 203, 204, 300, 301, 404, 410 ), true ) ) {
			return array();
		}
		foreach ( headers_list() as $header ) {
			// Personal responses keep the microcache behaviour. (WordPress's generic no-cache on
			// 404s is not personal: 404s are cached and purged by URL when content appears.)
			if ( preg_match( '/^(set-cookie:|cache-control:.*\b(private|no-store)\b)/i', $header ) ) {
				return array();
			}
		}
		return array( 'Surrogate-Control' => 'max-age=' . $this->settings->ttl() );
	}

	/**
	 * Keys for what the main query is.
	 */
	public function add_main_query_keys() {
		global $wp_query;
		$s = $this->scheme();
		if ( get_query_var( 'sitemap' ) || get_query_var( 'sitemap-stylesheet' ) ) {
			$this->add( array( $s->listing( 'sitemaps' ) ) );
			return;
		}
		if ( is_404() ) {
			$this->add( array( $s->listing( '404' ) ) );
			return;
		}
		if ( is_feed() ) {
			$this->add( array( $s->listing( 'feed' ) ) );
			if ( ! is_archive() && ! is_search() && ! is_singular() && ! is_comment_feed() ) {
				$this->add( array( $s->listing( 'home' ) ) ); // The main feed lists what the blog home lists.
			}
		}
		if ( is_search() ) {
			$this->add( array( $s->listing( 'search' ) ) );
		}
		if ( is_front_page() ) {
			$this->add( array( $s->listing( 'front' ) ) );
		}
		if ( is_home() ) {
			$this->add( array( $s->listing( 'home' ) ) );
			$posts_page = (int) get_option( 'page_for_posts' );
			if ( $posts_page && 'page' === get_option( 'show_on_front' ) ) {
				$this->add( array( $s->post( $posts_page ) ) );
			}
		}
		if ( is_singular() ) {
			$post = get_queried_object();
			if ( $post instanceof \WP_Post ) {
				$this->add( array( $s->post( $post->ID ), $s->comments( $post->ID ) ) );
			}
		} elseif ( is_comment_feed() ) {
			$this->add( array( $s->listing( 'comments' ) ) );
		}
		if ( is_category() || is_tag() || is_tax() ) {
			$term = get_queried_object();
			if ( $term instanceof \WP_Term ) {
				$this->add( array( $s->term( $term->term_id ), $s->term_listing( $term->term_id ) ) );
			}
		}
		if ( is_author() ) {
			$author = (int) get_query_var( 'author' );
			$this->add( array( $s->user( $author ), $s->author_listing( $author ) ) );
		}
		if ( is_date() ) {
			$ymd = sprintf( '%04d', (int) get_query_var( 'year' ) );
			if ( get_query_var( 'monthnum' ) ) {
				$ymd .= sprintf( '%02d', (int) get_query_var( 'monthnum' ) );
				if ( get_query_var( 'day' ) ) {
					$ymd .= sprintf( '%02d', (int) get_query_var( 'day' ) );
				}
			}
			if ( ! get_query_var( 'year' ) && get_query_var( 'm' ) ) {
				$ymd = substr( preg_replace( '/[^0-9]/', '', (string) get_query_var( 'm' ) ), 0, 8 );
			}
			$this->add( array( $s->date( $ymd ) ) );
		}
		if ( is_post_type_archive() ) {
			foreach ( (array) get_query_var( 'post_type' ) as $type ) {
				$this->add( array( $s->post_type_archive( $type ) ) );
			}
		}
		if ( $wp_query instanceof \WP_Query ) {
			foreach ( (array) $wp_query->posts as $post ) {
				if ( ! $post instanceof \WP_Post ) {
					continue;
				}
				if ( is_feed() ) {
					$this->add( array( $s->post_feed( $post->ID ) ) );
				}
				if ( ! is_singular() ) {
					$this->on_the_post( $post );
				}
			}
		}
	}

	/**
	 * Action `the_post`: a post rendered in any loop (main or secondary).
	 *
	 * @param \WP_Post $post Post.
	 */
	public function on_the_post( $post ) {
		if ( ! $post instanceof \WP_Post || is_admin() ) {
			return;
		}
		$s = $this->scheme();
		if ( is_singular() && (int) get_queried_object_id() === (int) $post->ID ) {
			return;
		}
		$this->add( array( is_comment_feed() ? $s->post_linked( $post->ID ) : $s->post_listed( $post->ID ) ) );
	}

	/**
	 * Filter `get_the_terms`: a post's terms are displayed (post-terms block, category lists,
	 * feed categories). REST responses expose term ids only and are keyed by r-t instead.
	 *
	 * @param \WP_Term[]|false|\WP_Error $terms    Terms.
	 * @param int                        $post_id  Post id.
	 * @param string                     $taxonomy Taxonomy.
	 * @return \WP_Term[]|false|\WP_Error
	 */
	public function on_get_the_terms( $terms, $post_id = 0, $taxonomy = '' ) {
		if ( ! is_array( $terms ) || is_admin() || ( defined( 'REST_REQUEST' ) && REST_REQUEST ) || ! is_taxonomy_viewable( $taxonomy ) ) {
			return $terms;
		}
		$s = $this->scheme();
		$this->add( array( $s->post_terms( (int) $post_id ) ) );
		foreach ( $terms as $term ) {
			if ( $term instanceof \WP_Term ) {
				$this->add( array( $this->in_post_class ? $s->term_slug( $term->term_id ) : $s->term( $term->term_id ) ) );
			}
		}
		return $terms;
	}

	/**
	 * Filter `post_class_taxonomies`: the term lookups that follow only print slugs.
	 *
	 * @param array $taxonomies Taxonomies.
	 * @return array
	 */
	public function on_post_class_start( $taxonomies ) {
		$this->in_post_class = true;
		return $taxonomies;
	}

	/**
	 * Filter `post_class`: end of the post class term lookups.
	 *
	 * @param string[] $classes Classes.
	 * @return string[]
	 */
	public function on_post_class_end( $classes ) {
		$this->in_post_class = false;
		return $classes;
	}

	/**
	 * Filter `the_author` (classic loops, feeds): the current post's author is displayed.
	 *
	 * @param string|null $name Display name.
	 * @return string|null
	 */
	public function on_the_author( $name ) {
		$post = get_post();
		if ( $post && ! is_admin() ) {
			$s = $this->scheme();
			$this->add( array( $s->post_author( $post->ID ), $s->user( (int) $post->post_author ) ) );
		}
		return $name;
	}

	/**
	 * Filters `get_the_author_{field}` (display name, nickname, bio, URL): a user's profile shown
	 * outside the author template tags (the latest-posts block prints the display name this way).
	 *
	 * @param string $value   Value.
	 * @param int    $user_id User id.
	 * @return string
	 */
	public function on_author_meta( $value, $user_id = 0 ) {
		if ( $user_id && ! is_admin() ) {
			$this->add( array( $this->scheme()->user( (int) $user_id ) ) );
		}
		return $value;
	}

	/**
	 * Filter `author_link`: a link to an author archive (name and URL of the user shown).
	 *
	 * @param string $link      Link.
	 * @param int    $author_id Author.
	 * @return string
	 */
	public function on_author_link( $link, $author_id = 0 ) {
		if ( $author_id && ! is_admin() ) {
			$this->add( array( $this->scheme()->user( (int) $author_id ) ) );
			$post = get_post();
			if ( $post && (int) $post->post_author === (int) $author_id ) {
				$this->add( array( $this->scheme()->post_author( $post->ID ) ) );
			}
		}
		return $link;
	}

	/**
	 * Filters `post_link` / `page_link` / `post_type_link`: any link to a post (widgets, blocks,
	 * menus) shows its URL and, usually, its title.
	 *
	 * @param string       $link Permalink.
	 * @param \WP_Post|int $post Post or id.
	 * @return string
	 */
	public function on_post_link( $link, $post = 0 ) {
		$id = $post instanceof \WP_Post ? (int) $post->ID : (int) $post;
		if ( $id && ! is_admin() && ! ( is_singular() && get_queried_object_id() === $id ) ) {
			$this->add( array( $this->scheme()->post_linked( $id ) ) );
		}
		return $link;
	}

	/**
	 * Filter `get_the_excerpt`: an excerpt shown outside the main loop (latest-posts block, widgets).
	 *
	 * @param string            $excerpt Excerpt.
	 * @param \WP_Post|int|null $post    Post.
	 * @return string
	 */
	public function on_excerpt( $excerpt, $post = null ) {
		$id = $post instanceof \WP_Post ? (int) $post->ID : (int) $post;
		if ( $id && ! is_admin() && ! ( is_singular() && get_queried_object_id() === $id ) ) {
			$this->add( array( $this->scheme()->post_listed( $id ) ) );
		}
		return $excerpt;
	}

	/**
	 * Filters `previous_post_link` / `next_post_link`: the adjacent post is linked by title.
	 *
	 * @param string        $output Link HTML.
	 * @param string        $format Format.
	 * @param string        $link   Link format.
	 * @param \WP_Post|null $post   Adjacent post.
	 * @return string
	 */
	public function on_adjacent_link( $output, $format = '', $link = '', $post = null ) {
		if ( $post instanceof \WP_Post ) {
			$s = $this->scheme();
			$this->add( array( $s->post_linked( $post->ID ) ) );
			if ( is_singular() ) {
				$this->add( array( $s->neighbors( get_queried_object_id() ) ) );
			}
		}
		return $output;
	}

	/**
	 * Filter `get_pages`: page lists (page-list block, wp_list_pages) link pages by title.
	 *
	 * @param \WP_Post[] $pages Pages.
	 * @return \WP_Post[]
	 */
	public function on_get_pages( $pages ) {
		if ( ! is_admin() ) {
			$s = $this->scheme();
			$this->add( array( $s->listing( 'pages' ) ) );
			foreach ( (array) $pages as $page ) {
				if ( $page instanceof \WP_Post ) {
					$this->add( array( $s->post_linked( $page->ID ) ) );
				}
			}
		}
		return $pages;
	}

	/**
	 * Filter `get_comments_number`: the page shows a comment count.
	 *
	 * @param int $count   Count.
	 * @param int $post_id Post id.
	 * @return int
	 */
	public function on_comments_number( $count, $post_id = 0 ) {
		if ( $post_id && ! is_admin() ) {
			$this->add( array( $this->scheme()->comments( (int) $post_id ) ) );
		}
		return $count;
	}

	/**
	 * Filter `render_block`: navigation, comment, author and latest-posts blocks.
	 *
	 * @param string         $html     Block HTML.
	 * @param array          $block    Block.
	 * @param \WP_Block|null $instance Block instance (context).
	 * @return string
	 */
	public function on_render_block( $html, $block, $instance = null ) {
		$s = $this->scheme();
		switch ( $block['blockName'] ?? '' ) {
			case 'core/post-author':
			case 'core/post-author-name':
			case 'core/post-author-biography':
				$post_id = ( $instance instanceof \WP_Block && isset( $instance->context['postId'] ) ) ? (int) $instance->context['postId'] : (int) get_the_ID();
				if ( $post_id ) {
					$this->add( array( $s->post_author( $post_id ), $s->user( (int) get_post_field( 'post_author', $post_id ) ) ) );
				}
				break;
			case 'core/navigation':
				$this->add( array( $s->listing( 'menus' ) ) );
				break;
			case 'core/latest-comments':
				$this->add( array( $s->listing( 'comments' ) ) );
				break;
			case 'core/latest-posts':
				$this->add( array( $s->listing( 'home' ) ) );
				break;
			case 'core/block':
				if ( ! empty( $block['attrs']['ref'] ) ) {
					$this->add( array( $s->embedded( (int) $block['attrs']['ref'] ) ) );
				}
				break;
		}
		return $html;
	}

	/**
	 * Records that the page renders an attachment, so that editing it (alt text, caption,
	 * title, description, files) is one purge of its key instead of a search through posts.
	 *
	 * @param int $attachment_id Attachment id.
	 */
	private function add_attachment( $attachment_id ) {
		if ( $attachment_id > 0 && ! is_admin() ) {
			$this->add( array( $this->scheme()->embedded( (int) $attachment_id ) ) );
		}
	}

	/**
	 * Filter `wp_get_attachment_url`: any use of an attachment's file (images, galleries,
	 * featured images, file links, REST media).
	 *
	 * @param string $url     URL.
	 * @param int    $post_id Attachment id.
	 * @return string
	 */
	public function on_attachment_url( $url, $post_id = 0 ) {
		$this->add_attachment( (int) $post_id );
		return $url;
	}

	/**
	 * Filter `wp_get_attachment_image_attributes`: an image tag built from the attachment (its
	 * alt text; galleries, featured images).
	 *
	 * @param array         $attr       Attributes.
	 * @param \WP_Post|null $attachment Attachment.
	 * @return array
	 */
	public function on_attachment_image_attributes( $attr, $attachment = null ) {
		if ( $attachment instanceof \WP_Post ) {
			$this->add_attachment( (int) $attachment->ID );
		}
		return $attr;
	}

	/**
	 * Filter `wp_content_img_tag`: an image in post content with a `wp-image-N` class (its
	 * srcset and sizes come from the attachment's metadata).
	 *
	 * @param string $tag           Image tag.
	 * @param string $context       Context.
	 * @param int    $attachment_id Attachment id.
	 * @return string
	 */
	public function on_content_img_tag( $tag, $context = '', $attachment_id = 0 ) {
		$this->add_attachment( (int) $attachment_id );
		return $tag;
	}

	/**
	 * Filter `wp_get_attachment_caption`: an attachment's caption shown.
	 *
	 * @param string $caption Caption.
	 * @param int    $post_id Attachment id.
	 * @return string
	 */
	public function on_attachment_caption( $caption, $post_id = 0 ) {
		$this->add_attachment( (int) $post_id );
		return $caption;
	}

	/**
	 * Filter `wp_nav_menu`: classic menus.
	 *
	 * @param string $html Menu HTML.
	 * @return string
	 */
	public function on_nav_menu( $html ) {
		$this->add( array( $this->scheme()->listing( 'menus' ) ) );
		return $html;
	}

	/**
	 * Action `dynamic_sidebar_before`: classic widgets.
	 */
	public function on_sidebar() {
		$this->add( array( $this->scheme()->listing( 'widgets' ) ) );
	}

	/* ---------------------------------------------------------------- REST */

	/**
	 * Filter `rest_prepare_{post_type}`: a post in a REST response.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Post          $post     Post.
	 * @return \WP_REST_Response
	 */
	public function on_rest_post( $response, $post ) {
		if ( $post instanceof \WP_Post ) {
			$this->add( array( $this->scheme()->rest_post( $post->ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_prepare_{taxonomy}`.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_Term          $term     Term.
	 * @return \WP_REST_Response
	 */
	public function on_rest_term( $response, $term ) {
		if ( $term instanceof \WP_Term ) {
			$this->add( array( $this->scheme()->rest_term( $term->term_id ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_prepare_user`.
	 *
	 * @param \WP_REST_Response $response Response.
	 * @param \WP_User          $user     User.
	 * @return \WP_REST_Response
	 */
	public function on_rest_user( $response, $user ) {
		if ( $user instanceof \WP_User ) {
			$this->add( array( $this->scheme()->rest_user( $user->ID ) ) );
		}
		return $response;
	}

	/**
	 * Filter `rest_post_dispatch`: collection routes get their collection key.
	 *
	 * @param \WP_HTTP_Response $response Response.
	 * @param \WP_REST_Server   $server   Server.
	 * @param \WP_REST_Request  $request  Request.
	 * @return \WP_HTTP_Response
	 */
	public function on_rest_dispatch( $response, $server, $request ) {
		if ( ! $request instanceof \WP_REST_Request || 'GET' !== $request->get_method() ) {
			return $response;
		}
		$route = (string) $request->get_route();
		if ( preg_match( '#^/wp/v2/([a-z0-9_-]+)/?$#', $route, $m ) ) {
			$this->add( array( $this->scheme()->rest_collection( $m[1] ) ) );
		} elseif ( 0 === strpos( $route, '/oembed/1.0/embed' ) ) {
			// oEmbed shows the post's title, excerpt, author and link.
			$post_id = url_to_postid( (string) $request->get_param( 'url' ) );
			if ( $post_id ) {
				$s = $this->scheme();
				$this->add( array( $s->post_listed( $post_id ), $s->post_author( $post_id ), $s->rest_post( $post_id ) ) );
			}
		}
		return $response;
	}

	/**
	 * Filter `rest_pre_serve_request` (runs after the REST server sent its own headers, only for
	 * real HTTP requests): emit the keys of an anonymous GET response.
	 *
	 * @param bool              $served  Whether the request was served.
	 * @param \WP_HTTP_Response $result  Response.
	 * @param \WP_REST_Request  $request Request.
	 * @return bool
	 */
	public function on_rest_serve( $served, $result, $request ) {
		if ( $request instanceof \WP_REST_Request && 'GET' === $request->get_method() && ! is_user_logged_in()
			&& $result instanceof \WP_HTTP_Response && ! headers_sent() && array() !== $this->keys ) {
			$this->emit_headers( $result->get_status() );
		}
		return $served;
	}
}
